"""The MCP server exposing the memory tools (stdio: `manage.py mcp`; streamable HTTP: `/mcp/`)."""
