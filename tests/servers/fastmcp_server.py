"""A small FastMCP-style MCP server for the export tests.

Its tools carry what the exporter must keep untouched: structured output (so the SDK derives an
`outputSchema`), annotations, titles and a tool-level `_meta`. It is written against the Python
`mcp` SDK pinned in tests/setup/real-servers.sh (2.x, where FastMCP is called MCPServer) and
still runs on a 1.x SDK, where the same class is `FastMCP`.

Run: python tests/servers/fastmcp_server.py   (speaks MCP over stdio)
     PORT=8000 python tests/servers/fastmcp_server.py http   (Streamable HTTP at /mcp)
"""

from typing import TypedDict

try:  # mcp >= 2.0 renamed FastMCP to MCPServer.
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server

from mcp.types import ToolAnnotations

server = Server(
    "tdqs-fixture-library",
    instructions="Look up books in a small fixed catalogue. Nothing is ever written.",
)

CATALOGUE = {
    "978-0141439518": ("Pride and Prejudice", "Jane Austen", 1813),
    "978-0486282114": ("Frankenstein", "Mary Shelley", 1818),
}


class Book(TypedDict):
    isbn: str
    title: str
    author: str
    year: int


@server.tool(
    title="Find a book by ISBN",
    annotations=ToolAnnotations(
        readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
    ),
    meta={"fixture/category": "lookup"},
)
def find_book(isbn: str) -> Book:
    """Return the catalogue entry for an ISBN-13 (digits with one hyphen after the prefix).

    Fails when the ISBN is not in the catalogue; use list_isbns to see which ones are.
    """
    title, author, year = CATALOGUE[isbn]
    return Book(isbn=isbn, title=title, author=author, year=year)


@server.tool(
    title="List catalogue ISBNs",
    annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False),
)
def list_isbns(limit: int = 10) -> list[str]:
    """List up to `limit` ISBNs in the catalogue, sorted ascending."""
    return sorted(CATALOGUE)[:limit]


if __name__ == "__main__":
    import os
    import sys

    # `http` serves Streamable HTTP on 127.0.0.1 at /mcp, port from PORT (export tests of
    # issue 15); without an argument, stdio.
    if sys.argv[1:] == ["http"]:
        server.run(transport="streamable-http", host="127.0.0.1", port=int(os.environ["PORT"]))
    else:
        server.run()
