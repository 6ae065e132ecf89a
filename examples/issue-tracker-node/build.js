// The example's build step: copies src/ to dist/ (a real server would compile TypeScript here).
"use strict";

const fs = require("fs");
const path = require("path");

const dist = path.join(__dirname, "dist");
fs.mkdirSync(dist, { recursive: true });
fs.copyFileSync(path.join(__dirname, "src", "index.js"), path.join(dist, "index.js"));
