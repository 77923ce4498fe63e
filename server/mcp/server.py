"""The MCP server: tools, resources and the prompt on the official ``mcp`` SDK's low-level server.

Each tool call is checked against its input schema, run in a worker thread (the event loop keeps answering,
so one long simulation does not block the next call) and answered with structured content plus a short text
summary. Every failure is a tool result with ``isError`` and ``{"error": {"kind", "message", ...}}``: an
anticipated one (:class:`ToolFailure`) says what to do; anything else is logged with its traceback and
reported as ``internal``. The server never stops on a tool's failure.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from nki_studio.mcp import sdk

sdk.load()  # before the first ``mcp`` import: the submodules below without the SDK's eager package inits

from mcp import types  # noqa: E402
from mcp.server.lowlevel.server import Server  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from nki_studio import __version__  # noqa: E402
from nki_studio.mcp import prompts  # noqa: E402
from nki_studio.mcp.config import McpConfig  # noqa: E402
from nki_studio.mcp.errors import ToolFailure  # noqa: E402
from nki_studio.mcp.schemas import TOOLS  # noqa: E402
from nki_studio.mcp.workspace import Workspace  # noqa: E402

if TYPE_CHECKING:
    from nki_studio.mcp.jobs import Simulator

Validator = Any  # a jsonschema validator (the package has no type information)

log = logging.getLogger("nki_studio.mcp")

Answer = tuple[dict[str, Any], str]
INSTRUCTIONS = (
    "nki-studio checks AWS Trainium NKI kernels without Trainium: lint (rules with fixes), simulate (NumPy "
    "simulation checked against a reference), estimate (an estimated timeline from the simulator trace; "
    "estimated, not measured), analyze_profile/compare (measured Neuron Explorer profiles), explain (rule "
    "pages, NKI API docs), tune (search tile sizes: each variant verified, ranked by the estimate), migrate (legacy neuronxcc.nki code to NKI 0.7, proven by simulating both). Get the "
    "prompt 'optimise_kernel' for the verify → estimate → optimise loop."
)


class NkiStudioMcp:
    """The tools' state: the workspace, the configuration and the simulation workers."""

    def __init__(self, config: McpConfig) -> None:
        self.config = config
        self.workspace = Workspace(config.roots)
        self._simulator: Simulator | None = None
        self._lock = threading.Lock()
        self._warm_started = False
        self._validators: dict[str, Validator] = {}
        self._handlers: dict[str, Callable[[dict[str, Any]], Answer]] = {
            "lint": self._lint,
            "simulate": self._simulate,
            "estimate": lambda a: self._profiles().estimate(self.workspace, self.simulator, a),
            "analyze_profile": lambda a: self._profiles().analyze_profile(self.workspace, a),
            "compare": lambda a: self._profiles().compare(self.workspace, self.simulator, a),
            "explain": self._explain,
            "calibrate": self._calibrate,
            "tune": self._tune,
            "migrate": self._migrate,
        }
        if config.remote_available:
            self._handlers["profile_remote"] = self._profile_remote

    # Every tool imports its stack on first use (the linter, jsonschema, the simulation jobs, NumPy, the
    # profile stack, the docs): the server's start does not wait for any of them, and the first lint
    # answer only for the linter (``benchmarks/mcp_bench.py``: start to first answer).
    @property
    def simulator(self) -> Simulator:
        """The simulation workers, created on first use."""
        with self._lock:
            if self._simulator is None:
                from nki_studio.mcp.jobs import Simulator

                self._simulator = Simulator(self.config)
            return self._simulator

    def _validator(self, name: str) -> Validator:
        with self._lock:
            if name not in self._validators:
                from jsonschema import Draft202012Validator

                self._validators[name] = Draft202012Validator(TOOLS[name]["input"])
            return self._validators[name]

    def _lint(self, args: dict[str, Any]) -> Answer:
        from nki_studio.mcp.lint_tool import lint

        return lint(self.workspace, self.config.settings, args)

    @staticmethod
    def _explain(args: dict[str, Any]) -> Answer:
        from nki_studio.mcp.explain_tool import explain

        return explain(args)

    def _simulate(self, args: dict[str, Any]) -> Answer:
        from nki_studio.mcp.simulate_tool import simulate

        return simulate(self.workspace, self.simulator, args)

    def _migrate(self, args: dict[str, Any]) -> Answer:
        from nki_studio.mcp.migrate_tool import migrate

        return migrate(self.workspace, self.config.settings, args)

    @staticmethod
    def _profiles() -> Any:
        from nki_studio.mcp import profile_tools

        return profile_tools

    def _calibrate(self, args: dict[str, Any]) -> Answer:
        from nki_studio.mcp.calibrate_tool import calibrate

        return calibrate(self.workspace, self.config.settings, args)

    def _tune(self, args: dict[str, Any]) -> Answer:
        from nki_studio.mcp.tune_tool import tune

        return tune(self.workspace, self.config, args)

    def _profile_remote(self, args: dict[str, Any]) -> Answer:
        from nki_studio.mcp.remote_tool import profile_remote

        return profile_remote(self.workspace, self.config, args)

    def tool_names(self) -> list[str]:
        """The tools this server offers (``profile_remote`` only when configured and enabled)."""
        return [name for name in TOOLS if name in self._handlers]

    def tools(self) -> list[types.Tool]:
        """The tool list with input and output schemas."""
        return [
            types.Tool(
                name=name,
                title=TOOLS[name]["title"],
                description=TOOLS[name]["description"],
                input_schema=TOOLS[name]["input"],
                output_schema=TOOLS[name]["output"],
                annotations=types.ToolAnnotations(
                    read_only_hint=TOOLS[name]["read_only"], open_world_hint=name == "profile_remote"
                ),
            )
            for name in self.tool_names()
        ]

    def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """Run one tool call to its result; never raises."""
        try:
            return self._call(name, arguments)
        finally:
            # The spare simulation worker starts once the first answer is out: its imports (NumPy, the
            # simulator) would otherwise compete with the server's start for the CPU.
            if not self._warm_started and self.config.trusted:
                self._warm_started = True
                threading.Thread(target=self._warm_up, name="nki-mcp-warm", daemon=True).start()

    def _warm_up(self) -> None:
        self.simulator.warm_up()

    def preload(self) -> None:
        """Import what the first call needs (the linter, the argument validators). Run in a thread while the
        server waits for the client's first requests: the client is another process, so this overlaps with
        its own work instead of adding to the first answer."""
        try:
            import nki_studio.mcp.lint_tool  # noqa: F401

            for name in self.tool_names():
                self._validator(name)
        except Exception:  # the calls import again and report any failure as a tool error
            log.debug("preload failed", exc_info=True)

    def _call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            handler = self._handlers.get(name)
            if handler is None:
                hint = (
                    " (profile_remote needs a configured host and --enable-remote-profiling)"
                    if name == "profile_remote"
                    else ""
                )
                raise ToolFailure(
                    "invalid_arguments", f"no tool {name!r}{hint}; tools: {', '.join(self.tool_names())}"
                )
            problems = sorted(self._validator(name).iter_errors(arguments), key=lambda e: list(e.path))
            if problems:
                where = ".".join(str(p) for p in problems[0].path) or "arguments"
                raise ToolFailure("invalid_arguments", f"{where}: {problems[0].message}", argument=where)
            structured, text = handler(arguments)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=text)], structured_content=structured
            )
        except ToolFailure as failure:
            return _error(failure)
        except Exception as exc:  # a bug of ours: logged, reported, and the server goes on
            log.exception("tool %s failed", name)
            return _error(ToolFailure("internal", f"internal error in {name}: {type(exc).__name__}: {exc}"))

    def resources(self) -> list[types.Resource]:
        """Rule pages (and their index) and the NKI API reference per stub module."""
        from nki_studio.mcp import docs

        out = [
            types.Resource(
                uri="nki-studio://rules",
                name="rules",
                title="nki-studio diagnostic codes",
                description="Index of every lint and simulation code",
                mime_type="text/markdown",
            )
        ]
        out += [
            types.Resource(
                uri=f"nki-studio://rules/{code}",
                name=code,
                title=f"{code} rule page",
                mime_type="text/markdown",
            )
            for code in docs.rule_codes()
        ]
        out += [
            types.Resource(
                uri=f"nki-studio://api/{module}",
                name=module,
                title=f"{module} API reference",
                description=f"Signatures and documentation of {module} (from the nki-studio stubs)",
                mime_type="text/markdown",
            )
            for module in (*docs.MODULES, *docs.LEGACY_MODULES)
        ]
        return out

    def read(self, uri: str) -> str:
        """The text of a resource; ValueError for an unknown URI."""
        from nki_studio.mcp import docs

        if uri == "nki-studio://rules":
            return docs.rule_index()
        kind, _, name = uri.removeprefix("nki-studio://").partition("/")
        if kind == "rules" and (page := docs.rule_page(name)) is not None:
            return page
        if kind == "api" and name in (*docs.MODULES, *docs.LEGACY_MODULES):
            return docs.api_reference(name)
        raise ValueError(f"no resource {uri}")

    def close(self) -> None:
        """Stop the simulation workers (if any started)."""
        with self._lock:
            simulator, self._simulator = self._simulator, None
        if simulator is not None:
            simulator.close()


def _error(failure: ToolFailure) -> types.CallToolResult:
    body = {"error": failure.to_json()}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"{failure.kind}: {failure.message}")],
        structured_content=json.loads(json.dumps(body, default=str)),
        is_error=True,
    )


def build_server(app: NkiStudioMcp) -> Server[Any]:
    """The SDK server with every handler bound to ``app``."""

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=app.tools())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        return await anyio.to_thread.run_sync(app.call, params.name, arguments)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=app.resources())

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text = app.read(uri)
        except ValueError as exc:
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc), data={"uri": uri}) from exc
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type="text/markdown")]
        )

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=prompts.NAME,
                    title="Verify, estimate, optimise",
                    description=prompts.DESCRIPTION,
                    arguments=[
                        types.PromptArgument(name=n, description=d, required=r)
                        for n, d, r in prompts.ARGUMENTS
                    ],
                )
            ]
        )

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != prompts.NAME:
            raise MCPError(code=types.INVALID_PARAMS, message=f"no prompt {params.name!r}")
        args = params.arguments or {}
        text = prompts.loop_text(
            args.get("file", "<kernel file>"), args.get("kernel"), app.config.remote_available
        )
        return types.GetPromptResult(
            description=prompts.DESCRIPTION,
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
        )

    return Server(
        "nki-studio",
        version=__version__,
        title="nki-studio",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


async def serve_stdio(app: NkiStudioMcp) -> None:
    """Serve one client over stdin/stdout until it disconnects."""
    from mcp.server.stdio import stdio_server

    server = build_server(app)
    threading.Thread(target=app.preload, name="nki-mcp-preload", daemon=True).start()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(app: NkiStudioMcp, port: int) -> None:
    """Serve streamable HTTP on the loopback interface only (``http://127.0.0.1:PORT/mcp``); the SDK's DNS
    rebinding protection accepts loopback Host and Origin headers only."""
    import uvicorn

    server = build_server(app)
    web = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(web, host="127.0.0.1", port=port, log_level="warning")
