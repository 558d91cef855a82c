"""The dashboard's web server (aiohttp): the index, a sweep's live page, a comparison, read-only.

Reading experiments and drawing reports happen on worker threads, so a slow bucket or a large sweep never
holds the other requests. A sweep is named in an address only by the key the catalog gave it; no path is
ever built from what a request says, so nothing outside the storages can be asked for.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from aiohttp import web

from tuner.errors import UsageError
from tuner.review.board import access, comparison, index_page, reports, sweep_page
from tuner.review.board.catalog import Catalog, Sweep
from tuner.review.board.reports import Reports

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord

CATALOG = web.AppKey("catalog", Catalog)
REPORTS = web.AppKey("reports", Reports)
TOKEN = web.AppKey("token", str)  # "" where none is asked (127.0.0.1)
T = TypeVar("T")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",  # the token in an address never leaves in a link
    "Cache-Control": "no-store",
}


async def _in_thread(call: Callable[[], T]) -> T:
    return await asyncio.get_running_loop().run_in_executor(None, call)


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Only this machine on 127.0.0.1; the token on any other address (403 without it)."""
    token = request.app[TOKEN] or None
    if token is None and not access.local_host_header(request.headers.get("Host")):
        raise web.HTTPForbidden(text="this dashboard answers only to 127.0.0.1 and localhost\n")
    given = access.given_token(
        request.query.get("token"), request.cookies.get(access.COOKIE), request.headers.get("Authorization")
    )
    if not access.allowed(token, given):
        raise web.HTTPForbidden(text="this dashboard needs its token: open the address it printed\n")
    response = await handler(request)
    response.headers.update(_HEADERS)
    if token is not None and request.query.get("token"):
        response.set_cookie(access.COOKIE, token, httponly=True, samesite="Strict")
    return response


def _sweep(request: web.Request) -> Sweep:
    key = f"{request.match_info['storage']}/{request.match_info['name']}"
    if ".." in key.split("/") or "\\" in key:
        raise web.HTTPForbidden(text="paths outside the dashboard's storages are refused\n")
    found = request.app[CATALOG].sweep(key)
    if found is None:
        raise web.HTTPNotFound(text=f"no experiment {key!r} under the dashboard's storages\n")
    return found


async def index(request: web.Request) -> web.Response:
    catalog = request.app[CATALOG]
    rows = await _in_thread(catalog.rows)
    return web.Response(text=index_page.page(rows, catalog.storages), content_type="text/html")


async def rows(request: web.Request) -> web.Response:
    found = await _in_thread(request.app[CATALOG].rows)
    return web.Response(text=index_page.rows_html(found), content_type="text/html")


async def experiments(request: web.Request) -> web.Response:
    """The index as JSON, for scripts."""
    found = await _in_thread(request.app[CATALOG].rows)
    return web.json_response(
        [
            {
                "key": r.sweep.key,
                "name": r.sweep.name,
                "folder": r.sweep.folder,
                "state": r.state,
                "space": r.space,
                "scheduler": r.scheduler,
                "searcher": r.searcher,
                "metric": r.metric,
                "mode": r.mode,
                "trials": r.trials,
                "fates": r.fates,
                "best": r.best,
                "front": r.front,
                "started": r.started,
                "wall_s": r.wall,
                "epochs": r.epochs,
                "problem": r.problem,
            }
            for r in found
        ]
    )


async def sweep(request: web.Request) -> web.Response:
    found = _sweep(request)
    drawn = await _in_thread(functools.partial(request.app[REPORTS].current, found))
    text = sweep_page.page(drawn.report, drawn.row, drawn.version)
    return web.Response(text=text, content_type="text/html")


async def update(request: web.Request) -> web.Response:
    """204 while the sweep is as the page shows it; else its new content."""
    found = _sweep(request)
    drawn = await _in_thread(functools.partial(request.app[REPORTS].current, found))
    if request.query.get("version") == drawn.version:
        return web.Response(status=204)
    text = sweep_page.update(drawn.report, drawn.row, drawn.version)
    return web.Response(text=text, content_type="application/json")


async def compare(request: web.Request) -> web.Response:
    catalog = request.app[CATALOG]
    keys = list(dict.fromkeys(request.query.getall("sweep", [])))
    sweeps = []
    for key in keys:
        found = catalog.sweep(key)
        if found is None:
            raise web.HTTPNotFound(text=f"no experiment {key!r} under the dashboard's storages\n")
        sweeps.append(found)

    def draw() -> str:
        from tuner import experiment
        from tuner.review.compare import check_comparable

        records: list[ExperimentRecord] = [experiment.load(s.folder) for s in sweeps]
        try:
            check_comparable(records)
        except UsageError as exc:
            return comparison.refusal(str(exc))
        with reports.DRAWING:
            return comparison.page(records, [s.name for s in sweeps])

    return web.Response(text=await _in_thread(draw), content_type="text/html")


@functools.cache
def _plotly_js() -> str:
    import plotly.offline

    return plotly.offline.get_plotlyjs()


async def plotly_js(request: web.Request) -> web.Response:
    text = await _in_thread(_plotly_js)
    return web.Response(text=text, content_type="application/javascript")


def make_app(storages: list[str], token: str | None) -> web.Application:
    """The dashboard over ``storages``; ``token`` asked of every request where given."""
    app = web.Application(middlewares=[guard])
    app[CATALOG] = Catalog(storages)
    app[REPORTS] = Reports(app[CATALOG])
    app[TOKEN] = token or ""
    app.router.add_get("/", index)
    app.router.add_get("/rows", rows)
    app.router.add_get("/api/experiments", experiments)
    app.router.add_get("/compare", compare)
    app.router.add_get("/static/plotly.js", plotly_js)
    app.router.add_get("/sweep/{storage}/{name}", sweep)
    app.router.add_get("/sweep/{storage}/{name}/update", update)
    return app


def check_storages(storages: list[str]) -> list[str]:
    """The storages as given, each refused in one line where it is not a folder or bucket that exists."""
    from pathlib import Path

    from tuner import storage

    checked = []
    for given in storages:
        plain = storage.local_path(given)
        if plain is not None:
            path = Path(plain).expanduser()
            if not path.is_dir():
                what = "is a file, not a folder" if path.exists() else "does not exist"
                raise UsageError(
                    f"storage {given} {what}; pass a folder or bucket URI that holds experiments"
                )
            checked.append(str(path.resolve()))
        else:
            if not storage.is_dir(given):
                raise UsageError(f"storage {given} does not exist (or cannot be listed)")
            checked.append(given.rstrip("/"))
    return checked


def serve(storages: list[str], host: str, port: int, out: Callable[[str], None]) -> None:
    """Serve the dashboard until Ctrl-C (or SIGTERM); bad input is one line before anything starts, and the
    address is printed once the server answers there."""
    import signal

    from tuner.review.dashboard import port_free

    checked = check_storages(storages)
    port_free(host, port)
    token = access.new_token() if access.needs_token(host) else None
    app = make_app(checked, token)
    found = len(app[CATALOG].rows())
    reports.warm_up()  # what drawing imports (half a second), before the address is given: never in a page's wait
    out(f"tuner dashboard: {found} experiment(s) under {', '.join(checked)}")

    def announce() -> None:
        out(f"open {access.url(host, port, token)} (Ctrl-C stops it)")
        if token is not None:
            out("every request needs the token in that address; give it only to whoever may see these sweeps")

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    # taken here, not left to Python: a process started in the background inherits SIGINT ignored
    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        asyncio.run(_serve(app, host, port, announce))
    except KeyboardInterrupt:
        pass
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    out("dashboard stopped")


async def _serve(app: web.Application, host: str, port: int, announce: Callable[[], None]) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        announce()
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
