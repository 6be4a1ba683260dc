"""The one seam between the evolve layer and a language model.

Any langchain-core chat model or Runnable works: ``ainvoke`` is used when present,
``invoke`` (in a worker thread) otherwise. Every failure a provider can throw —
network, auth, rate limit, a model that returns nothing — becomes :class:`EvolveError`
*before* anything is written, which is what lets callers promise "no half-written
lesson".
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from contextfs.errors import EvolveError, MissingExtraError
from contextfs.extras import require
from contextfs.fixes import Fix

from .parsing import message_text

__all__ = ["AsyncModel", "LanguageModel", "SyncModel", "ask", "require_model", "resolve_llm", "run_sync"]

log = logging.getLogger(__name__)
T = TypeVar("T")


@runtime_checkable
class AsyncModel(Protocol):
    """A model with an async call: every langchain-core chat model and Runnable."""

    def ainvoke(self, input: Any, /) -> Awaitable[Any]: ...


@runtime_checkable
class SyncModel(Protocol):
    """A model with only a blocking call; :func:`ask` runs it in a worker thread."""

    def invoke(self, input: Any, /) -> Any: ...


#: What the evolve layer takes as a model: one of the above, or a plain function from
#: messages to an answer (a message, a string, or anything with ``content``).
LanguageModel = AsyncModel | SyncModel | Callable[[Any], Any]

def require_model(llm: LanguageModel | None, step: str, *, offline: str | None = None) -> None:
    """Refuse a step that needs judgment when no model is configured (never pretend).

    ``offline`` names the fix (a :class:`~contextfs.fixes.Fix` action) that does the part of
    the step that needs no model, when there is one; else the fix says how to give a model.
    """
    if llm is None:
        raise EvolveError(f"{step} needs a language model and none is configured; nothing was written",
                          fix=Fix(offline or "model"))


_PYTHON = "python:"


def _model_object(target: str) -> LanguageModel:
    """The model named by ``module:attribute`` (a chat model, or a function from messages to text)."""
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise EvolveError(f"--llm python:{target!r} is not python:MODULE:NAME; write e.g. python:mymodels:local_model")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except ImportError as exc:
        raise EvolveError(f"--llm python:{target} cannot import {module_name!r} ({exc}); install it or add "
                          "its folder to PYTHONPATH") from None
    except AttributeError:
        raise EvolveError(f"--llm python:{target}: {module_name} has no {attribute!r}; name a chat model "
                          "or a function in it") from None
    if not isinstance(value, (AsyncModel, SyncModel)) and not callable(value):
        raise EvolveError(f"--llm python:{target} is a {type(value).__name__}, not a chat model or a function; "
                          "name a LangChain chat model or a function from messages to text")
    return value


def resolve_llm(spec: str | None) -> LanguageModel | None:
    """A chat model for ``provider:model`` via LangChain's ``init_chat_model``, or the
    object ``python:module:attribute`` names (a model your code builds: a local one, a
    scripted one).

    >>> resolve_llm(None) is None
    True
    """
    if not spec:
        return None
    if spec.startswith(_PYTHON):
        return _model_object(spec[len(_PYTHON):])
    provider, sep, model = spec.partition(":")
    if not sep or not provider.strip() or not model.strip():
        raise EvolveError(f"--llm {spec!r} is not provider:model; write e.g. openai:gpt-4o-mini or ollama:llama3.1")
    # 'langchain' is the optional [llm] extra: imported only when a model is asked for.
    try:
        init_chat_model = require("langchain.chat_models", "llm").init_chat_model
    except MissingExtraError as exc:
        # The model needs its provider's package as well: one pip line installs both.
        raise MissingExtraError(f"{exc} langchain-{provider.strip().lower()}", name=exc.name) from None
    try:
        return init_chat_model(model.strip(), model_provider=provider.strip())
    except ImportError as exc:
        raise EvolveError(
            f"the {provider} provider package is missing ({exc}); pip install langchain-{provider.strip().lower()}"
        ) from None
    except Exception as exc:  # unknown provider, missing API key, bad model name
        raise EvolveError(f"cannot start model {spec!r}: {exc}; check the provider name, model and API key") from None


async def ask(llm: LanguageModel | None, messages: Sequence[Any] | str, *, step: str) -> str:
    """Send ``messages`` to ``llm`` and return its text; any failure is EvolveError."""
    require_model(llm, step)
    try:
        if isinstance(llm, AsyncModel):
            result = await llm.ainvoke(messages)
        elif isinstance(llm, SyncModel):
            result = await asyncio.to_thread(llm.invoke, messages)
        elif callable(llm):
            result = await asyncio.to_thread(llm, messages)
        else:
            raise TypeError(f"{type(llm).__name__} has neither ainvoke nor invoke")
    except EvolveError:
        raise
    except Exception as exc:
        log.warning("model call for %s failed: %s", step, exc)
        raise EvolveError(f"the model failed during {step} ({type(exc).__name__}: {exc}); nothing was written; retry") from None
    text = message_text(result)
    if not text.strip():
        raise EvolveError(f"the model returned an empty answer during {step}; nothing was written; retry")
    return text


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also when an event loop is already running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=worker, name="contextfs-evolve-sync")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
