"""Sealed matchups: the forecaster plays in a process of its own, the referee never runs beside it.

:func:`seal` wraps a forecaster in :class:`Sealed`, a forecaster the ordinary step loop drives
(:mod:`arena.runner`): every verb and every attribute the arena reads is asked of a child
process that holds the real forecaster, over a pipe, one call at a time. The child sees what
the protocol gives a forecaster (the contexts, the realized forecast and the outcome of a round
after it announced) and nothing else: nature, the game's streams, the recorder and the referee
stay in the arena's process, so whatever the forecaster does to its own interpreter (patching
the referee, the metrics, numpy) changes no score. The oblivious fast path is off
(``play_oblivious`` would hand the child every outcome at once); a second-guessing panel's
``advice(p)`` is asked of the arena's process, which holds the panel.

Replies are rebuilt by a restricted unpickler (:func:`loads`): plain values, numpy arrays and
scalars, :class:`arena.Forecast` and the arena's own kernels (:mod:`arena.kernels`), nothing
that names other code. The arena checks each forecast as for any forecaster. A child that
dies, sends what cannot be rebuilt, or (under ``time_limit``) overruns, forfeits; a plugin's
exception of any kind, ``KeyboardInterrupt`` and ``SystemExit`` included, is re-raised here as
an ordinary exception of the same name, which forfeits. Once the matchup is scored
(:meth:`Sealed.close`) the child ends, and the proxy answers from the plain attributes it last
read (``name``, ``claims``, ``params()``, ...).

What runs in the arena's process still: the plugin's import and its constructor (the registry
imports every plugin module; constructors only store parameters).

Examples
--------
>>> from forecasters.defensive import K29
>>> fc = seal(K29())
>>> fc.name, fc.claims, isinstance(fc, Sealed)
('k29', ('kernel', 'search_precision', 'smce'), True)
>>> fc.close()
>>> sorted(fc.params())
['fast', 'tol']
"""

from __future__ import annotations

import builtins
import functools
import io
import multiprocessing
import pickle
import signal
import weakref
from typing import Any

import numpy as np

from arena.games.experts import AdviceContext
from arena.protocols import (
    DecisionForecaster,
    ExpertsForecaster,
    Forecaster,
    ProtocolError,
    RoundedForecaster,
)

#: The game hooks a proxy takes over from the real forecaster's class (the games read them with isinstance).
MIXINS = (RoundedForecaster, DecisionForecaster, ExpertsForecaster)
#: The largest reply the arena reads from a sealed forecaster (bytes).
MAX_REPLY = 1 << 30
#: Seconds between two looks at whether the child still lives, while waiting for its reply.
POLL = 0.25
#: An array argument of at least so many numbers is sent once while it is the same object: the referee asks
#: ``weights_after(cum, t)`` of every round t with one (T, N) array, which must not cross T times.
BIG = 4096
#: The arena's kernels, which a forecaster's ``kernel_object`` may be.
KERNELS = ("FermiSobolev", "RBF", "RandomFourierRBF", "FeatureTerm", "FeatureKernel", "SumKernel", "ProductKernel")
#: What a reply may name: numpy's arrays and scalars, the arena's forecasts and kernels. Nothing else is imported.
ALLOWED = frozenset(
    [(f"numpy.{core}.multiarray", name) for core in ("core", "_core") for name in ("_reconstruct", "scalar")]
    + [(f"numpy.{core}.numeric", "_frombuffer") for core in ("core", "_core")]
    + [("numpy", "ndarray"), ("numpy", "dtype"), ("arena.protocols", "Forecast")]
    + [("arena.kernels", name) for name in KERNELS]
)
#: Attributes of the base classes that the proxy asks the child for (the rest reach ``__getattr__``).
_DECLARED: tuple[str, ...] = ("name", "games", "family", "claims", "kernel_object", "length", "tol")
_DECLARED += ("randomized", "rate", "advice_lipschitz")  # of DecisionForecaster and ExpertsForecaster
#: The optional verbs: None, or a call forwarded to the child.
_OPTIONAL = ("predict_many", "weights_after", "kernel_contexts")


class SealedError(ProtocolError):
    """The sealed forecaster's process ended, or sent what the arena does not accept."""


class PluginRaised(Exception):
    """Base of the exceptions re-raised from the child (each named as the plugin's was)."""


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"a reply naming {module}.{name}")


def loads(data: bytes):
    """A reply from the child, rebuilt naming only :data:`ALLOWED` (unpickling may call what a pickle names).

    >>> loads(pickle.dumps((0.5, np.arange(2.0))))
    (0.5, array([0., 1.]))
    >>> loads(pickle.dumps(print))
    Traceback (most recent call last):
    ...
    _pickle.UnpicklingError: a reply naming builtins.print
    """
    return _Unpickler(io.BytesIO(data)).load()


def seal(forecaster: Forecaster) -> Sealed:
    """``forecaster`` playing in a child process of its own (one already sealed is returned as it is).

    The proxy is of a class with the game hooks of the forecaster's class (:data:`MIXINS`,
    read from its method resolution order: no plugin code runs to decide it)."""
    if isinstance(forecaster, Sealed):
        return forecaster
    mixins = tuple(m for m in MIXINS if m in type(forecaster).__mro__)
    return _proxy_class(mixins)(forecaster)


@functools.cache
def _proxy_class(mixins: tuple) -> type:
    return type("Sealed", (Sealed, *mixins), {"__module__": __name__}) if mixins else Sealed


class Sealed(Forecaster):
    """A forecaster whose every verb and attribute is answered by a child process (see the module).

    Build it with :func:`seal`. After :meth:`close`, attributes are answered from the plain values
    the child last gave and no verb can be called."""

    play_oblivious = None  # every outcome at once would show the child the future
    can_play_oblivious = False

    def __init__(self, forecaster: Forecaster):
        object.__setattr__(self, "_child", _Child(forecaster))
        weakref.finalize(self, self._child.stop)

    def reset(self, rng: np.random.Generator) -> None:
        self._child.call("reset", rng)

    def predict(self, x):
        return self._child.call("predict", x)

    def update(self, x, p: float, y: float) -> None:
        self._child.call("update", x, p, y)

    def params(self) -> dict:
        return self._child.call("params")

    def clone(self) -> Forecaster:
        raise TypeError("a sealed forecaster cannot be cloned: its state lives in its own process")

    def close(self) -> None:
        """End the child, keeping the plain attributes it holds now (``params()`` included)."""
        self._child.close()

    def __setattr__(self, name: str, value) -> None:  # the arena sets ``game`` before the game
        if name.startswith("_"):
            object.__setattr__(self, name, value)
        else:
            self._child.set(name, value)

    def __getattr__(self, name: str):
        if name.startswith("_"):  # copy, pickle and the like probe these: not the plugin's
            raise AttributeError(name)
        return self._child.get(name)

    def __repr__(self) -> str:
        return f"Sealed({self._child.label})"


def _declared(name: str) -> property:
    return property(lambda self: self._child.get(name), doc=f"the forecaster's ``{name}``, from its process")


for _name in (*_DECLARED, *_OPTIONAL):
    setattr(Sealed, _name, _declared(_name))


class _Kept:
    """The big array sent last, again (:data:`BIG`)."""


def _big(value) -> bool:
    return isinstance(value, np.ndarray) and value.size >= BIG


class _Advised:
    """A second-guessing context on its way to the child: the revealed advice; ``advice(p)`` is asked back."""

    def __init__(self, values: np.ndarray, lipschitz: float):
        self.values, self.lipschitz = values, lipschitz


class _Child:
    """The parent's end of one sealed forecaster: starts the child when first asked, one request at a time."""

    def __init__(self, forecaster: Forecaster):
        self.forecaster = forecaster  # as built and never called here: a new child starts from it
        self.label = type(forecaster).__name__
        self.process: Any = None
        self.conn: Any = None
        self.view: dict | None = None  # the plain attributes kept by close()
        self.advice = None  # the second-guessing panel of the call under way
        self.kept = None  # the last big array sent (the child keeps its copy; the arena's scorers never change one)
        self.busy = False  # a request was sent and its reply not read (an interrupt came in between)

    # ------------------------------------------------------------------ what the proxy asks

    def call(self, verb: str, *args):
        if self.view is not None:
            if verb == "params" and "params()" in self.view:
                return dict(self.view["params()"])
            raise SealedError(f"{verb}: the sealed forecaster's process has ended (it ends once the game is scored)")
        return self._ask(("call", verb, tuple(self._outbound(a) for a in args)))

    def get(self, name: str):
        if self.view is not None:
            if name in self.view:
                return self.view[name]
            if name in _OPTIONAL:
                return None
            raise AttributeError(f"{name} (the sealed forecaster's process has ended; it was not a plain value)")
        return self._ask(("get", name, ()))

    def set(self, name: str, value) -> None:
        if self.view is None:
            self._ask(("set", name, (value,)))

    def close(self) -> None:
        if self.view is None:
            view = self._ask(("view", "", ()))
            self.view = {}
            for name, data in view.items() if isinstance(view, dict) else ():
                try:
                    self.view[str(name)] = loads(data)
                except Exception:  # noqa: BLE001 (a value the arena does not take is left out)
                    pass
        self.stop()

    # ------------------------------------------------------------------ the child's process

    def _start(self) -> None:
        self.stop()
        fork = "fork" in multiprocessing.get_all_start_methods()
        ctx: Any = multiprocessing.get_context("fork" if fork else "spawn")
        mine, theirs = ctx.Pipe()
        self.process = ctx.Process(
            target=serve, args=(theirs, mine if fork else None, self.forecaster), name="arena-sealed", daemon=True
        )
        self.process.start()
        theirs.close()
        self.conn, self.busy, self.kept = mine, False, None

    def stop(self) -> None:
        process, conn, self.process, self.conn = self.process, self.conn, None, None
        if conn is not None:
            conn.close()  # the child's next read ends it
        if process is not None:
            process.join(0.5)
            if process.is_alive():
                process.kill()
                process.join()

    def _ask(self, request: tuple):
        if self.process is None or self.busy:  # not started, ended, or owing an interrupted reply: a fresh one
            self._start()
        verb = request[1] if request[0] == "call" else request[0] + " " + request[1]
        try:
            self.busy = True
            self.conn.send(request)
            reply = self._reply(verb)
            self.busy = False
        except (EOFError, OSError):
            raise self._ended(verb) from None
        finally:
            self.advice = None
        if not isinstance(reply, tuple) or not reply:
            raise self._garbage(verb, f"a reply of type {type(reply).__name__}")
        if reply[0] == "ok" and len(reply) == 2:
            return reply[1]
        if reply == ("callable",):
            return functools.partial(self.call, request[1])
        if reply[0] == "raise" and len(reply) == 3 and all(isinstance(s, str) for s in reply[1:]):
            raise rebuilt(reply[1], reply[2])
        raise self._garbage(verb, "a reply of another shape")

    def _reply(self, verb: str):
        """The child's reply; meanwhile, answer the ``advice(p)`` it asks. Waits in short looks, so that the
        watchdog's interrupt reaches this thread and a child that died is seen."""
        while True:
            while not self.conn.poll(POLL):
                if not self.process.is_alive():
                    raise EOFError
            data = self.conn.recv_bytes(MAX_REPLY)
            try:
                reply = loads(data)
            except Exception as exc:  # noqa: BLE001 (whatever the bytes are, they forfeit)
                raise self._garbage(verb, f"{type(exc).__name__}: {str(exc)[:200]}") from None
            if not (isinstance(reply, tuple) and len(reply) == 2 and reply[0] == "advice"):
                return reply
            self.conn.send(self._advise(reply[1], verb))

    def _advise(self, p, verb: str) -> tuple:
        if self.advice is None or type(p) is not float:
            raise self._garbage(verb, "an advice request outside a second-guessing round")
        try:
            return ("ok", np.asarray(self.advice(p), dtype=np.float64))
        except Exception as exc:  # noqa: BLE001 (the panel's error reaches the forecaster's call, as unsealed)
            return ("raise", (type(exc).__name__, str(exc)))

    def _outbound(self, value):
        if _big(value):
            if value is self.kept:
                return _Kept()
            self.kept = value
        if isinstance(value, AdviceContext) and value.second_guessing:
            self.advice = value.advice
            return _Advised(np.asarray(value).copy(), value.lipschitz)
        return value

    def _ended(self, verb: str) -> SealedError:
        process = self.process
        if process is not None:
            process.join(1.0)
        code = None if process is None else process.exitcode
        if code is None:  # it lives: its reply could not be read (longer than MAX_REPLY, or cut)
            return self._garbage(verb, "a reply that could not be read")
        self.stop()
        how = f"exit status {code}" if code >= 0 else f"killed by signal {-code}"
        return SealedError(f"the forecaster's process ended during {verb} ({how})")

    def _garbage(self, verb: str, what: str) -> SealedError:
        self.stop()
        return SealedError(f"the forecaster's process answered {verb} with {what}, which the arena does not accept")


def rebuilt(name: str, message: str) -> Exception:
    """The plugin's exception, named as it was: a built-in one as itself when it is an Exception (an
    AttributeError stays one for ``getattr`` with a default), any other as an ordinary exception of that name
    (a plugin's KeyboardInterrupt forfeits; it does not interrupt the arena).

    >>> rebuilt("KeyError", "'a'"), isinstance(rebuilt("KeyboardInterrupt", ""), Exception)
    (KeyError("'a'"), True)
    """
    name = name if name.isidentifier() and len(name) <= 100 else "Exception"
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except Exception:  # noqa: BLE001 (a built-in whose constructor takes other arguments)
            pass
    return _raised(name)(message)


@functools.cache
def _raised(name: str) -> type:
    return type(name, (PluginRaised,), {"__module__": __name__})


# ---------------------------------------------------------------------- the child


def serve(conn, other, forecaster: Forecaster) -> None:
    """The child's loop: answer each request of the arena with the forecaster's, until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the arena's to handle; it ends this process
    if other is not None:
        other.close()  # the arena's end: once the arena is gone, the next read here ends this process
    kept: list = [None]  # the big array received last (:data:`BIG`)
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        conn.send_bytes(answer(forecaster, request, conn, kept))


def answer(forecaster: Forecaster, request: tuple, conn=None, kept: list | None = None) -> bytes:
    """The pickled reply to one request: ("ok", value), ("callable",) or ("raise", name, message)."""
    kind, name, args = request
    value = None
    try:
        if kind == "call":
            value = getattr(forecaster, name)(*(_inbound(a, conn, kept if kept is not None else [None]) for a in args))
        elif kind == "get":
            value = getattr(forecaster, name)
            if callable(value) and not isinstance(value, type):
                return pickle.dumps(("callable",))
        elif kind == "set":
            setattr(forecaster, name, args[0])
        else:
            value = _view(forecaster)
        reply: tuple = ("ok", value)
    except BaseException as exc:  # noqa: BLE001 (any exception of the plugin is its forfeit)
        reply = ("raise", type(exc).__name__, str(exc))
    try:
        return pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # noqa: BLE001
        what = f"{name} returned a {type(value).__name__}, which cannot leave the forecaster's process"
        return pickle.dumps(("raise", "ProtocolError", f"{what} ({type(exc).__name__})"))


def _inbound(value, conn, kept: list):
    if isinstance(value, _Kept):
        return kept[0]
    if _big(value):
        kept[0] = value
    if isinstance(value, _Advised):
        return AdviceContext(value.values, advice=functools.partial(_ask_advice, conn), lipschitz=value.lipschitz)
    return value


def _ask_advice(conn, p: float) -> np.ndarray:
    conn.send_bytes(pickle.dumps(("advice", float(p))))
    kind, value = conn.recv()
    if kind == "raise":
        raise rebuilt(*value)
    return value


def _view(forecaster: Forecaster) -> dict:
    """Each plain public attribute of the forecaster and ``params()``, pickled one by one (one that cannot be
    sent is left out)."""
    out = {}
    for name in dir(forecaster):
        if name.startswith("_"):
            continue
        try:
            value = getattr(forecaster, name)
            if not callable(value):
                out[name] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:  # noqa: BLE001
            continue
    try:
        params = {k: v if _sendable(v) else repr(v) for k, v in forecaster.params().items()}
        out["params()"] = pickle.dumps(params, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:  # noqa: BLE001
        pass
    return out


def _sendable(value) -> bool:
    try:
        loads(pickle.dumps(value))
    except Exception:  # noqa: BLE001
        return False
    return True


__all__ = ["Sealed", "SealedError", "loads", "seal"]
