"""The application layer every front end (language server, CLI, MCP server) calls: settings, simulation,
profiles, remote profiling and lint, each decided once here. Modules import their heavy stacks on first use."""
