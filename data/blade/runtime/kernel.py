"""The Python kernel of clade's BLADE environment: one long-lived interpreter in the sandbox.

It loads the dataset once as BLADE does (`df = pd.read_csv(path)`, no options; BLADE's
nb/nb_executor.py INIT_CODE), keeps a pristine deep copy, and then pulls work from the parent
over the sandbox's channel (fd 3, one JSON value per line): it asks `{"id", "op": "next",
"reply"}` with the result of the previous command, and the parent answers with the next
command. Commands:

- execute: a notebook cell in one persistent namespace (pd, np, scipy, sm, smf, df);
- scripts: each script as the body of BLADE's `transform(df)` on a fresh copy of the data; each
  outcome is sent as a notification as soon as it is known (frames can be large);
- model: a transform script, then model code on its result; the fitted statsmodels object's
  family, link, terms and estimates;
- exit.

Frames travel in the wire format of src/env/blade/runtime/frame-wire.ts: every column once per
batch ("block"), later columns with the same values point at it.

Run as `python3 -s -S -B -X utf8 kernel.py CONFIG_JSON`; the config names the dataset and the
folders to put on sys.path (site is not imported, so no .pth file of the host runs here).
"""

import ast
import hashlib
import json
import linecache
import math
import os
import signal
import sys
import time
import traceback
import warnings

CONFIG = json.loads(sys.argv[1])
for _path in CONFIG["paths"]:
    if _path not in sys.path:
        sys.path.append(_path)

# Imported once here so that a cell starts at once; what BLADE preloads (both executors). Their
# import-time warnings (joblib finds no /dev/shm here) would only fill the sandbox's stderr.
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import numpy as np
    import pandas as pd
    import scipy
    import statsmodels.api as sm
    import statsmodels.formula.api as smf
    from pandas.api.types import (
        is_datetime64_any_dtype,
        is_float_dtype,
        is_integer_dtype,
        is_numeric_dtype,
        is_object_dtype,
    )
    from pandas.core.groupby import DataFrameGroupBy

CHANNEL_FD = 3
READ_CHUNK = 1 << 16
# Text captured from one cell beyond this many characters is counted, not kept.
OUTPUT_CHARS = int(CONFIG.get("outputChars", 4000))
# Frames shown by a cell: like a notebook, but short.
DISPLAY_OPTIONS = {
    "display.max_rows": 20,
    "display.min_rows": 10,
    "display.max_columns": 20,
    "display.width": 120,
    "display.max_colwidth": 50,
}
# Frames of traceback shown for an error (the cell's own frames, innermost last).
TRACEBACK_FRAMES = 4
# Datetime format BLADE hashes with (nb/df_hash.py).
DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
# Largest integer a JavaScript number holds exactly; larger ones travel as text.
SAFE_INTEGER = 2**53 - 1
# Longest the kernel spends ending the processes a cell left behind.
STRAY_KILL_SECONDS = 2.0
# Datetime parses of object columns remembered across batches (by the column's values).
PARSE_CACHE_SIZE = 256

for _option, _value in DISPLAY_OPTIONS.items():
    pd.set_option(_option, _value)


# --- the channel ---------------------------------------------------------------------------


class Channel:
    def __init__(self, fd):
        self.fd = fd
        self.buffer = b""
        self.next_id = 0
        self.owner = os.getpid()

    def mine(self):
        """A process forked by a cell leaves quietly instead of talking on the kernel's channel."""
        if os.getpid() != self.owner:
            os._exit(0)

    def send(self, message):
        data = (json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n").encode()
        self.send_raw(data)

    def send_raw(self, data):
        self.mine()
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]

    def read_line(self):
        self.mine()
        while b"\n" not in self.buffer:
            chunk = os.read(self.fd, READ_CHUNK)
            if not chunk:
                raise EOFError("the parent closed the channel")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def request(self, op, **body):
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "op": op, **body})
        while True:
            try:
                message = json.loads(self.read_line())
            except ValueError:
                continue
            if not isinstance(message, dict) or message.get("id") != ident:
                continue
            if "error" in message:
                raise RuntimeError(message["error"])
            return message.get("result")


# --- captured output -----------------------------------------------------------------------


class CappedWriter:
    """A text stream that keeps its first `cap` characters and counts the rest."""

    def __init__(self, cap):
        self.cap = cap
        self.parts = []
        self.kept = 0
        self.dropped = 0

    def write(self, text):
        if not isinstance(text, str):
            text = str(text)
        room = self.cap - self.kept
        if room > 0:
            part = text[:room]
            self.parts.append(part)
            self.kept += len(part)
        self.dropped += max(0, len(text) - max(0, room))
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    def writable(self):
        return True

    @property
    def encoding(self):
        return "utf-8"

    def text(self):
        return "".join(self.parts)


class Captured:
    """Sends sys.stdout and sys.stderr to one CappedWriter while a cell runs."""

    def __init__(self, cap):
        self.writer = CappedWriter(cap)

    def __enter__(self):
        self.saved = (sys.stdout, sys.stderr)
        sys.stdout = sys.stderr = self.writer
        return self.writer

    def __exit__(self, *exc):
        sys.stdout, sys.stderr = self.saved
        return False


def capped(text, cap):
    if len(text) <= cap:
        return text
    return text[:cap] + f"\n... [{len(text) - cap} more characters not shown]"


def error_line(error):
    lines = traceback.format_exception_only(type(error), error)
    return (lines[-1] if lines else type(error).__name__).strip()


def short_traceback(error, filename_prefix):
    """The error's last line after the frames of the caller's own code (not the libraries')."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename.startswith(filename_prefix)
    ][-TRACEBACK_FRAMES:]
    lines = ["Traceback (most recent call last):"]
    for frame in frames:
        lines.append(f"  line {frame.lineno}, in {frame.name}")
        if frame.line:
            lines.append(f"    {frame.line.strip()}")
    if isinstance(error, SyntaxError) and error.text:
        lines.append(f"  line {error.lineno}: {error.text.rstrip()}")
    lines.append(error_line(error))
    return "\n".join(lines)


_source_counter = [0]


def register_source(prefix, source):
    """A unique file name for `source`, known to linecache so that tracebacks quote it."""
    _source_counter[0] += 1
    name = f"{prefix}-{_source_counter[0]}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    return name


# --- namespaces ----------------------------------------------------------------------------


class _LazyPyplot:
    """matplotlib.pyplot as `plt`, imported on first use: BLADE preloads it for agent code, and
    importing it in every session would cost each one a noticeable start."""

    def __getattr__(self, name):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot

        return getattr(pyplot, name)


def base_namespace():
    """What BLADE's two executors preload (nb_executor.py and simple_code_executor.py); sklearn
    is imported by the code that uses it, where it is installed."""
    import pickle
    import typing

    namespace = {
        "__name__": "__main__",
        "__builtins__": __builtins__,
        "pd": pd,
        "np": np,
        "scipy": scipy,
        "sm": sm,
        "smf": smf,
        "pickle": pickle,
        "plt": _LazyPyplot(),
        "DataFrameGroupBy": DataFrameGroupBy,
    }
    for name in ("List", "Optional", "Callable", "Union", "Dict", "FrozenSet", "Set",
                 "Literal", "Any"):
        namespace[name] = getattr(typing, name)
    return namespace


# --- the wire format of frames -------------------------------------------------------------


def wire_float(value):
    if math.isnan(value):
        return None
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def float_values(series):
    values = series.to_numpy(dtype="float64", na_value=np.nan)
    if np.isfinite(values).all():
        return values.tolist()
    return [wire_float(value) for value in values.tolist()]


def format_datetimes(series):
    """BLADE's datetime text (df_hash.py): strftime, else coerce and strftime; NaT as None."""
    try:
        texts = series.dt.strftime(DATETIME_FORMAT)
    except Exception:
        texts = pd.to_datetime(series, errors="coerce").dt.strftime(DATETIME_FORMAT)
    return [None if isinstance(text, float) or text is None else text for text in texts.tolist()]


def object_texts(series):
    missing = series.isna().to_numpy()
    texts = []
    for value, gone in zip(series.tolist(), missing):
        if gone:
            texts.append(None)
            continue
        try:
            texts.append(str(value))
        except Exception:
            texts.append(repr(value))
    return texts


def datetime_parse(series):
    """pandas' own parse attempt on an object column, as BLADE's hashing makes it."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=Warning)
            parsed = pd.to_datetime(series.fillna(""), errors="raise")
    except (ValueError, TypeError, OverflowError):
        return None
    except Exception:
        return None
    if is_datetime64_any_dtype(parsed.dtype):
        return format_datetimes(parsed)
    # Parsed, but not to one datetime dtype (mixed time zones): BLADE hashes the objects' text.
    return [str(value) for value in parsed.astype(str).tolist()]


def other_texts(series):
    """The text BLADE's hashing gives a column of any other dtype (numeric ones fill 0)."""
    try:
        if is_numeric_dtype(series.dtype):
            series = series.fillna(0)
        return [str(value) for value in series.astype(str).tolist()]
    except Exception:
        return [str(value) for value in series.tolist()]


def encode_column(series):
    """(kind, values, datetimeParse or absent) of one column, as BLADE's hashing reads it."""
    dtype = series.dtype
    if is_integer_dtype(dtype):
        filled = series.fillna(0) if series.hasnans else series
        values = [int(value) for value in filled.tolist()]
        if values and max(abs(min(values)), abs(max(values))) > SAFE_INTEGER:
            return "other", [str(value) for value in values], None
        return "int", values, None
    if is_float_dtype(dtype):
        return "float", float_values(series), None
    if dtype == bool:
        return "bool", series.tolist(), None
    if is_object_dtype(dtype):
        return "object", object_texts(series), "parse"
    if is_datetime64_any_dtype(dtype):
        return "datetime", format_datetimes(series), None
    return "other", other_texts(series), None


class FrameEncoder:
    """Encodes the frames of one batch; a column's values travel once per batch."""

    def __init__(self, parse_cache):
        self.blocks = {}
        self.parse_cache = parse_cache

    def encode(self, frame):
        parts = []
        for index in range(frame.shape[1]):
            series = frame.iloc[:, index]
            kind, values, parse = encode_column(series)
            values_json = json.dumps(values, allow_nan=False, separators=(",", ":"))
            key = hashlib.sha256(f"{kind}\0{values_json}".encode("utf-8", "surrogatepass"))
            key = key.hexdigest()
            head = {"name": str(frame.columns[index]), "dtype": str(series.dtype), "kind": kind}
            if key in self.blocks:
                head["block"] = self.blocks[key]
                parts.append(json.dumps(head, separators=(",", ":")))
                continue
            block = len(self.blocks)
            self.blocks[key] = block
            head["block"] = block
            extra = ""
            if parse == "parse":
                parsed = self.parse_cache.get(key, False)
                if parsed is False:
                    parsed = datetime_parse(series)
                    if len(self.parse_cache) >= PARSE_CACHE_SIZE:
                        self.parse_cache.pop(next(iter(self.parse_cache)))
                    self.parse_cache[key] = parsed
                extra = ',"datetimeParse":' + json.dumps(parsed, separators=(",", ":"))
            head_json = json.dumps(head, separators=(",", ":"))
            parts.append(f'{head_json[:-1]},"values":{values_json}{extra}}}')
        return '{"rowCount":%d,"columns":[%s]}' % (frame.shape[0], ",".join(parts))


# --- commands ------------------------------------------------------------------------------


class Kernel:
    def __init__(self, channel, data):
        self.channel = channel
        self.pristine = data
        self.namespace = base_namespace()
        self.namespace["df"] = data.copy(deep=True)
        self.parse_cache = {}

    # execute --------------------------------------------------------------------------------

    def execute(self, command):
        code = command.get("code", "")
        cap = int(command.get("outputChars", OUTPUT_CHARS))
        name = register_source("<cell", code)
        with Captured(cap) as writer:
            try:
                tree = ast.parse(code, filename=name)
                last = None
                shown = not code.rstrip().endswith(";")
                if tree.body and isinstance(tree.body[-1], ast.Expr) and shown:
                    last = ast.Expression(tree.body.pop().value)
                exec(compile(tree, name, "exec"), self.namespace)
                if last is not None:
                    value = eval(compile(last, name, "eval"), self.namespace)
                    if value is not None:
                        writer.write(repr(value))
                error = None
            except BaseException as caught:  # a cell may raise SystemExit or KeyboardInterrupt
                if isinstance(caught, (SystemExit, KeyboardInterrupt)):
                    caught = RuntimeError(f"{type(caught).__name__} is not allowed in a cell")
                error = caught
        output = writer.text()
        if writer.dropped:
            output += f"\n... [{writer.dropped} more characters not shown]"
        if error is None:
            return {"ok": True, "output": capped(output, cap)}
        details = short_traceback(error, "<cell")
        output = f"{output}\n{details}" if output else details
        return {"ok": False, "output": capped(output, cap), "error": error_line(error)}

    # scripts --------------------------------------------------------------------------------

    def transform(self, script):
        """Runs `script` as BLADE's transform body (CODE_TEMPLATE_RUN) on a fresh copy."""
        body = "    " + script.replace("\n", "\n    ")
        source = (
            "def transform(df: Union[pd.DataFrame, DataFrameGroupBy]):\n"
            "    df = df.copy(deep=True)\n"
            f"{body}\n"
            "    return df\n"
        )
        name = register_source("<script", source)
        namespace = base_namespace()
        with Captured(OUTPUT_CHARS):
            exec(compile(source, name, "exec"), namespace)
            return namespace["transform"](self.pristine.copy(deep=True))

    def scripts(self, command):
        encoder = FrameEncoder(self.parse_cache)
        for index, script in enumerate(command.get("scripts", [])):
            self.channel.send({"op": "started", "index": index})
            try:
                result = self.transform(script)
                if isinstance(result, pd.DataFrame):
                    frame = encoder.encode(result)
                    self.channel.send_raw(
                        ('{"op":"outcome","index":%d,"outcome":{"ok":true,"kind":"frame",'
                         '"frame":%s}}\n' % (index, frame)).encode("utf-8", "surrogatepass")
                    )
                    continue
                if isinstance(result, DataFrameGroupBy):
                    outcome = {"ok": True, "kind": "groupby", "columns": groupby_columns(result)}
                else:
                    outcome = {"ok": True, "kind": "other", "type": type(result).__name__}
            except BaseException as caught:
                if isinstance(caught, KeyboardInterrupt):
                    raise
                outcome = {"ok": False, "error": error_line(caught)}
            self.channel.send({"op": "outcome", "index": index, "outcome": outcome})
        return {"done": True}

    # model ----------------------------------------------------------------------------------

    def model(self, command):
        try:
            data = self.transform(command.get("transform", ""))
        except BaseException as caught:
            if isinstance(caught, KeyboardInterrupt):
                raise
            return {"ok": False, "error": f"the transform failed: {error_line(caught)}"}
        if not isinstance(data, pd.DataFrame):
            return {
                "ok": False,
                "error": f"the transform returned a {type(data).__name__}, not a DataFrame",
            }
        try:
            with Captured(OUTPUT_CHARS):
                result = run_model_code(command.get("model", ""), data)
            return {"ok": True, "model": describe_model(result)}
        except BaseException as caught:
            if isinstance(caught, KeyboardInterrupt):
                raise
            return {"ok": False, "error": error_line(caught)}


def groupby_columns(grouped):
    """The column list BLADE keeps for a DataFrameGroupBy (it reduces it with .any())."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [str(name) for name in grouped.any().columns]
    except Exception:
        return [str(name) for name in grouped.obj.columns]


# --- model code ----------------------------------------------------------------------------


def model_code_inside_func(code):
    """BLADE's EntireAnalysis.model_code_inside_func (eval/datamodel/lm_analysis.py).

    When the code defines a function whose name holds "model", the body of the *first*
    function defined, up to its first top-level return. clade keeps that return's value as the
    code's final expression (BLADE never runs this code; clade reads the fitted model from it).
    """
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, None, None
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    if not any("model" in node.name for node in functions):
        return code, None, None
    arguments = functions[0].args.args
    body = []
    returned = None
    for child in functions[0].body:
        if isinstance(child, ast.Return):
            returned = child.value
            break
        body.append(child)
    source = "\n".join(ast.unparse(node) for node in body)
    expression = ast.unparse(returned) if returned is not None else None
    return source, expression, (arguments[0].arg if arguments else None)


def is_results(value):
    return hasattr(value, "params") and hasattr(value, "model") and is_model(value.model)


def is_model(value):
    try:
        from statsmodels.base.model import Model
    except ImportError:
        return False
    return isinstance(value, Model)


def run_model_code(code, data):
    """Runs the model code with `df` bound to `data` and returns the fitted results object."""
    source, returned, argument = model_code_inside_func(code)
    namespace = base_namespace()
    namespace["df"] = data
    if argument:
        # The function's own name for its data (BLADE renames it only for transforms).
        namespace[argument] = data
    name = register_source("<model", source)
    tree = ast.parse(source, filename=name)
    final = None
    if returned is not None:
        final = ast.Expression(ast.parse(returned, mode="eval").body)
    elif tree.body and isinstance(tree.body[-1], ast.Expr):
        final = ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), namespace)
    candidates = []
    if final is not None:
        candidates.append(eval(compile(final, name, "eval"), namespace))
    # Then the names the code assigned, last first.
    assigned = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else (
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
        for target in targets:
            if isinstance(target, ast.Name):
                assigned.append((getattr(node, "lineno", 0), target.id))
    for _, name_id in sorted(assigned, reverse=True):
        candidates.append(namespace.get(name_id))
    for value in candidates:
        if is_results(value):
            return value
    for value in candidates:
        if is_model(value):
            # A model that was specified but never fitted: fit it with its defaults.
            try:
                return value.fit(disp=0)
            except TypeError:
                return value.fit()
    raise ValueError(
        "the model code left no fitted statsmodels model (assign the result of .fit() to a "
        "variable, or end with it)"
    )


FAMILY_BY_MODEL = {
    "OLS": ("gaussian", "identity"),
    "WLS": ("gaussian", "identity"),
    "GLS": ("gaussian", "identity"),
    "GLSAR": ("gaussian", "identity"),
    "QuantReg": ("gaussian", "identity"),
    "RLM": ("gaussian", "identity"),
    "Logit": ("binomial", "logit"),
    "Probit": ("binomial", "probit"),
    "Poisson": ("poisson", "log"),
    "NegativeBinomial": ("negativebinomial", "log"),
    "NegativeBinomialP": ("negativebinomial", "log"),
    "GeneralizedPoisson": ("poisson", "log"),
    "ZeroInflatedPoisson": ("poisson", "log"),
    "ZeroInflatedNegativeBinomialP": ("negativebinomial", "log"),
    "MNLogit": ("multinomial", "logit"),
    # A linear mixed model: gaussian with an identity link; its random effects are not terms.
    "MixedLM": ("gaussian", "identity"),
}


def family_and_link(model):
    family = getattr(model, "family", None)
    if family is not None and hasattr(family, "link"):  # GLM, GEE
        return type(family).__name__.lower(), type(family.link).__name__.lower()
    name = type(model).__name__
    if name in FAMILY_BY_MODEL:
        return FAMILY_BY_MODEL[name]
    if name == "OrderedModel":
        distr = getattr(model, "distr", None)
        link = "logit" if getattr(distr, "name", "") == "logistic" else "probit"
        return "ordinal", link
    return name.lower(), "unknown"


def number(value):
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return wire_float(value)


def by_term(values, terms):
    if values is None:
        return {}
    if hasattr(values, "index") and hasattr(values, "tolist"):
        try:
            return {str(k): number(v) for k, v in zip(values.index, values.tolist())}
        except Exception:
            pass
    try:
        flat = list(np.asarray(values).ravel())
    except Exception:
        return {}
    return {term: number(value) for term, value in zip(terms, flat)}


def describe_model(result):
    model = result.model
    family, link = family_and_link(model)
    params = result.params
    if hasattr(params, "index"):
        terms = [str(term) for term in params.index]
    else:
        terms = [str(term) for term in (getattr(model, "exog_names", None) or [])]
    dv = getattr(model, "endog_names", None)
    if isinstance(dv, (list, tuple)):
        dv = dv[0] if len(dv) == 1 else ", ".join(str(name) for name in dv)
    formula = getattr(model, "formula", None)
    if isinstance(formula, str) and "~" in formula:
        dv = formula.split("~", 1)[0].strip()

    def attribute(name):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return getattr(result, name)
        except Exception:
            return None

    return {
        "family": family,
        "link": link,
        "dv": str(dv),
        "terms": terms,
        "params": by_term(params, terms),
        "stdErrors": by_term(attribute("bse"), terms),
        "pValues": by_term(attribute("pvalues"), terms),
        "observations": int(attribute("nobs") or 0),
    }


def end_strays():
    """Ends every process a cell left behind (a fork bomb keeps forking after the cell), then
    collects their exit statuses. Only in the sandbox, where the kernel's parent is the PID
    namespace's init and kill(-1) reaches the sandbox's processes alone; never without it."""
    if CONFIG.get("sandboxed") and os.getppid() == 1:
        deadline = time.monotonic() + STRAY_KILL_SECONDS
        # kill(-1) may miss a child forked while it runs: again, until nothing is left to signal
        # (zombies of the kernel's own children count until they are collected).
        while time.monotonic() < deadline:
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                break
            except OSError:
                break
            collect_children()
            time.sleep(0.001)
    collect_children()


def collect_children():
    try:
        while os.waitpid(-1, os.WNOHANG)[0] != 0:
            pass
    except ChildProcessError:
        pass


# --- main ----------------------------------------------------------------------------------


def main():
    channel = Channel(CHANNEL_FD)
    warnings.simplefilter("ignore", category=FutureWarning)
    try:
        data = pd.read_csv(CONFIG["data"])
    except Exception as caught:
        channel.request("next", reply={"fatal": f"could not read the dataset: {error_line(caught)}"})
        return
    # Output written straight to fd 1 (C libraries, os.write) is nobody's business.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    kernel = Kernel(channel, data)
    handlers = {"execute": kernel.execute, "scripts": kernel.scripts, "model": kernel.model}
    reply = {"ready": True, "rows": int(data.shape[0]), "columns": int(data.shape[1]),
             "pandas": pd.__version__}
    while True:
        command = channel.request("next", reply=reply)
        op = command.get("op") if isinstance(command, dict) else None
        if op == "exit":
            return
        handler = handlers.get(op)
        reply = handler(command) if handler else {"error": f"unknown command {op!r}"}
        end_strays()


if __name__ == "__main__":
    try:
        main()
    except EOFError:
        pass
