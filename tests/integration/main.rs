mod claude_code;
