"""The operations every surface runs (MCP tools, REST's /api/v1/operations): the registry
(`registry`), strict validation (`validation`), output schemas (`schemas`), and one module per MCP
profile that registers its operations on import (`core`, `graph`, `evidence`, `ingest`,
`open_query`).
"""
