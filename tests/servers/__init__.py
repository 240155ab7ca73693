"""MCP servers the test suite runs for real (stdio, SSE, streamable HTTP) and misbehaving ones."""
