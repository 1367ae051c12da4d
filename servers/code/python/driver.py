"""The Python side of one code session: a long-lived interpreter the code server drives.

Protocol: newline-delimited JSON on fd 3 (a socket pair shared with the server), so the
user's stdout and stderr stay plain streams. For every execute the driver writes an end
marker to fd 1 and fd 2 after the cell ran, which tells the server that everything the cell
printed (also from subprocesses) has been read, then sends the result message on fd 3.
"""
import ast
import base64
import builtins
import io
import json
import linecache
import os
import signal
import site
import sys
import traceback
import types
import warnings

DRIVER_FILE = os.path.abspath(__file__)
CHANNEL_FD = 3


class Channel:
    def __init__(self, fd):
        self.fd = fd
        self.reader = os.fdopen(os.dup(fd), "rb")

    def receive(self):
        line = self.reader.readline()
        return json.loads(line) if line else None

    def send(self, message):
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data):]


# KeyboardInterrupt only while user code runs: a SIGINT racing the end of a cell must not
# break the driver's own read loop.
executing = False


def on_sigint(signum, frame):
    if executing:
        raise KeyboardInterrupt


def add_install_dir():
    """Packages the `install` tool puts in the session venv become importable without a restart."""
    venv = os.environ.get("AGENTBOX_PYTHON_VENV")
    if not venv:
        return
    version = "python%d.%d" % sys.version_info[:2]
    site_dir = os.path.join(venv, "lib", version, "site-packages")
    if os.path.isdir(site_dir) and site_dir not in sys.path:
        site.addsitedir(site_dir)
        # our venv wins over the system's copy of the same package
        sys.path.remove(site_dir)
        sys.path.insert(1, site_dir)
    import importlib
    importlib.invalidate_caches()


def make_namespace():
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    return main.__dict__


def _trim(summary):
    """Frames of the user's code only: from the first cell frame on, without the driver's."""
    frames = list(summary)
    cells = [i for i, f in enumerate(frames) if f.filename.startswith("<cell ")]
    if cells:
        frames = frames[cells[0]:]
    return traceback.StackSummary.from_list(
        [f for f in frames if os.path.abspath(f.filename) != DRIVER_FILE])


def user_traceback(exc):
    """The traceback as the user's code sees it (chained exceptions included)."""
    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc))
    top = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    seen, pending = set(), [top]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        current.stack = _trim(current.stack)
        pending += [current.__cause__, current.__context__]
    return "".join(top.format())


def split_last_expression(tree):
    """(statements, last expression or None): a trailing expression is evaluated for display."""
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
        return tree, last
    return tree, None


class LazyLoop:
    """The event loop top-level await runs on, made by the first cell that awaits. asyncio is
    imported only then: it brings ssl and its libraries, about 4 MiB of private memory in every
    interpreter, most of which never awaits anything (issue 41)."""

    def __init__(self):
        self.loop = None

    def run(self, coroutine):
        if self.loop is None:
            import asyncio
            self.loop = asyncio.new_event_loop()
        return self.loop.run_until_complete(coroutine)


def run_code(code_obj, namespace, loop):
    # top-level await compiles to a coroutine-flagged code object; eval then returns a coroutine
    result = eval(code_obj, namespace)
    if code_obj.co_flags & 0x80 and isinstance(result, types.CoroutineType):  # CO_COROUTINE
        result = loop.run(result)
    return result


def collect_figures():
    """Every open matplotlib figure as a PNG, then closed, as a notebook shows them once."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    images = []
    for number in pyplot.get_fignums():
        figure = pyplot.figure(number)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", bbox_inches="tight")
        images.append({"mimeType": "image/png", "data": base64.b64encode(buffer.getvalue()).decode()})
    pyplot.close("all")
    return images


def safe_repr(value):
    try:
        return repr(value)
    except Exception as exc:  # a broken __repr__ must not break the cell
        return "<repr failed: %s: %s>" % (type(exc).__name__, exc)


def execute(message, namespace, loop):
    global executing
    cell = message.get("cell", 0)
    filename = "<cell %d>" % cell
    source = message["code"]
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    value, error, status = None, None, "ok"
    add_install_dir()
    try:
        executing = True
        tree = compile(source, filename, "exec", flags | ast.PyCF_ONLY_AST, dont_inherit=True)
        tree, last = split_last_expression(tree)
        run_code(compile(tree, filename, "exec", flags, dont_inherit=True), namespace, loop)
        if last is not None:
            result = run_code(compile(last, filename, "eval", flags, dont_inherit=True), namespace, loop)
            if result is not None:
                builtins._ = result
                value = safe_repr(result)
    except KeyboardInterrupt as exc:
        status, error = "interrupted", user_traceback(exc)
    except BaseException as exc:  # SystemExit too: the session stays alive
        status, error = "error", user_traceback(exc)
    finally:
        executing = False
    images = []
    try:
        images = collect_figures()
    except Exception as exc:
        sys.stderr.write("could not render the figures: %s\n" % exc)
    return {"type": "result", "id": message["id"], "status": status, "value": value, "error": error, "images": images}


def end_streams(marker):
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass
    os.write(1, marker.encode())
    os.write(2, marker.encode())


def main():
    os.environ.setdefault("MPLBACKEND", "Agg")
    # with Agg, plt.show() only warns that it cannot show anything: the figure is returned instead
    warnings.filterwarnings("ignore", message=".*non-interactive.*")
    sys.argv = [""]
    sys.path.insert(0, "")  # like python -c / a notebook: modules in the working directory import
    signal.signal(signal.SIGINT, on_sigint)
    channel = Channel(CHANNEL_FD)
    namespace = make_namespace()
    loop = LazyLoop()
    channel.send({"type": "ready", "pid": os.getpid(), "version": sys.version.split()[0]})
    while True:
        message = channel.receive()
        if message is None:
            return
        if message.get("type") == "execute":
            result = execute(message, namespace, loop)
            end_streams(message["marker"])
            channel.send(result)


if __name__ == "__main__":
    main()
