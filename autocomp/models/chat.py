"""Chat completions from any OpenAI-compatible server (vLLM, TGI, a hosted API), for the
`openai` caption writer and answerer: concurrent requests; timeouts, connection errors,
429 and 5xx retried with exponential backoff (the openai client's own retry); one clear
error when the server stays unreachable."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"
LOGPROB_SLACK = 1e-4  # a log-probability this far above 0 is rounding (0 is certainty)


TIMEOUT_ENV = "AUTOCOMP_CHAT_TIMEOUT"  # seconds a request may wait (default 60)


def _seconds(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < 86_400:
        raise AutocompError(f"{where}={text!r}: a number of seconds above 0, below a day")
    return value


class ChatClient:
    def __init__(self, model: str, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", timeout: float | None = None,
                 max_retries: int = 5, concurrency: int = 8):
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        if timeout is None:  # eval scorers name no options: the variable sets it
            timeout = _seconds(os.environ.get(TIMEOUT_ENV) or "60", TIMEOUT_ENV)
        self.api_key_env, self.timeout = api_key_env, float(timeout)
        if not api_key_env.endswith(("_API_KEY", "_TOKEN")):
            import warnings

            warnings.warn(f"api_key_env '{api_key_env}' does not look like an API key's "
                          "variable (…_API_KEY or …_TOKEN); its value is sent to "
                          f"{self.base_url}", stacklevel=2)
        self.max_retries, self.concurrency = max_retries, concurrency
        self._client = None

    def client(self):
        if self._client is None:
            openai = require("openai", "openai", "the openai backends")
            self._client = openai.OpenAI(base_url=self.base_url,
                                         api_key=os.environ.get(self.api_key_env) or "EMPTY",
                                         timeout=self.timeout, max_retries=0)
        return self._client

    def describe(self) -> dict:
        """{"base_url" (without any user:password), "model": the id the server lists for
        the model asked (vLLM: with the weights it loaded, `root`), or the asked name where
        the server lists none}; one error when it cannot be reached."""
        from urllib.parse import urlsplit, urlunsplit

        import openai

        parts = urlsplit(self.base_url)
        url = urlunsplit(parts._replace(netloc=parts.hostname + (
            f":{parts.port}" if parts.port else ""))) if parts.hostname else self.base_url
        try:
            listed = list(self.client().with_options(max_retries=1).models.list())
        except (openai.APIConnectionError, openai.APITimeoutError):
            raise AutocompError(
                f"cannot reach the chat server at {url} to ask which model it serves: start "
                "it, or set base_url / OPENAI_BASE_URL (no cached score is used without it)"
            ) from None
        except (openai.APIError, ValueError, TypeError):
            listed = []  # a server without /v1/models: the name asked is all there is
        entry = next((m for m in listed if getattr(m, "id", None) == self.model), None)
        root = getattr(entry, "root", None) if entry is not None else None
        model = self.model if not isinstance(root, str) or root == self.model \
            else f"{self.model} ({root})"
        return {"base_url": url, "model": model}

    def _create(self, messages: list[dict], **params):
        """One completion; a connection error, 429 or 5xx retried up to max_retries times
        (backoff 0.5 s doubling to 8 s), a timeout once: a server silent for twice the
        timeout is stuck (six silent tries of 60 s kept a command waiting 12 minutes)."""
        import random
        import time

        import openai

        transient = (openai.APITimeoutError, openai.APIConnectionError,
                     openai.RateLimitError, openai.InternalServerError)
        start, timeouts = time.monotonic(), 0
        for attempt in range(self.max_retries + 1):
            try:
                return self.client().chat.completions.create(
                    model=self.model, messages=messages, **params)
            except transient as exc:
                timeouts += isinstance(exc, openai.APITimeoutError)
                if timeouts > 1 or attempt == self.max_retries:
                    raise self._explain(exc, attempt, time.monotonic() - start) from None
            except Exception as exc:  # noqa: BLE001 (what is not transient: said at once)
                said = self._explain(exc, attempt, time.monotonic() - start)
                if said is exc:
                    raise
                raise said from None
            time.sleep(min(8.0, 0.5 * 2 ** attempt) * (0.75 + 0.5 * random.random()))
        raise AssertionError("unreachable")  # the loop returns or raises

    def _explain(self, exc: Exception, retries: int, seconds: float) -> Exception:
        """The one line an error of the server becomes (others are returned as they are)."""
        import json

        import openai

        if isinstance(exc, openai.APITimeoutError):
            return AutocompError(
                f"the chat server at {self.base_url} did not answer within {self.timeout:g} s "
                f"({retries + 1} tries, {seconds:.0f} s in all): it is overloaded or stuck; "
                "try again later, or raise the timeout (the backend's `timeout` option; for "
                f"eval scorers {TIMEOUT_ENV}=SECONDS)")
        if isinstance(exc, openai.APIConnectionError):
            return AutocompError(
                f"cannot reach the chat server at {self.base_url} ({type(exc).__name__} after "
                f"{retries} retries): start it, or set base_url / OPENAI_BASE_URL")
        if isinstance(exc, openai.APIStatusError):
            if exc.status_code >= 500 or exc.status_code == 429:
                return AutocompError(
                    f"the chat server at {self.base_url} failed ({exc.status_code}: "
                    f"{_short(exc.message)}) after {retries} retries: it is overloaded or "
                    "broken; try again later (what was scored is kept)")
            return AutocompError(
                f"the chat server at {self.base_url} refused the request ({exc.status_code}: "
                f"{_short(exc.message)}); check the model name '{self.model}' and the API key "
                f"in ${self.api_key_env}")
        if isinstance(exc, (json.JSONDecodeError, openai.APIResponseValidationError)):
            return AutocompError(
                f"the chat server at {self.base_url} answered with something that is not a "
                f"chat completion ({_short(exc)}): is base_url an OpenAI-compatible /v1 "
                "endpoint?")
        return exc

    def complete(self, messages: list[dict], **params) -> str:
        """The text of one completion ("" when the server's answer has none)."""
        resp = self._create(messages, **params)
        try:
            content = resp.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            return ""
        return content if isinstance(content, str) else ""

    def first_logprobs(self, messages: list[dict], top: int = 20) -> dict[str, float] | None:
        """{token: log-probability} of the `top` likeliest first tokens of the answer
        (greedy, one token); None when the server returns no log-probabilities."""
        resp = self._create(messages, temperature=0.0, max_tokens=1, logprobs=True,
                            top_logprobs=top)
        try:
            listed = resp.choices[0].logprobs.content[0].top_logprobs
        except (AttributeError, IndexError, TypeError):
            return None
        out: dict[str, float] = {}
        for entry in (listed or ())[:top]:  # a server listing more is read no further
            token, value = getattr(entry, "token", None), getattr(entry, "logprob", None)
            try:
                value = float(value)
            except (TypeError, ValueError):
                value = math.nan
            if not isinstance(token, str) or not math.isfinite(value) or value > LOGPROB_SLACK:
                raise AutocompError(
                    f"the chat server at {self.base_url} returned the log-probability "
                    f"{_short(repr(getattr(entry, 'logprob', None)))} for the token "
                    f"{_short(repr(token))} of '{self.model}' (a number <= 0 expected): the "
                    "server's scores cannot be used")
            out.setdefault(token, min(value, 0.0))
        return out

    def complete_many(self, conversations: list[list[dict]], params: list[dict]) -> list[str]:
        return self._each(lambda cp: self.complete(cp[0], **cp[1]),
                          list(zip(conversations, params, strict=True)))

    def first_logprobs_many(self, conversations: list[list[dict]], top: int = 20) -> list:
        return self._each(lambda c: self.first_logprobs(c, top), conversations)

    def _each(self, call, args: list) -> list:
        """`call` on every argument, `concurrency` requests at a time, answers in order."""
        if len(args) <= 1 or self.concurrency <= 1:
            return [call(a) for a in args]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(call, args))


def _short(text) -> str:
    return " ".join(str(text).split())[:160]
