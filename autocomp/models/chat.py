"""Chat completions from any OpenAI-compatible server (vLLM, TGI, a hosted API), for the
`openai` caption writer and answerer: concurrent requests; timeouts, connection errors,
429 and 5xx retried with exponential backoff (the openai client's own retry); one clear
error when the server stays unreachable."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from autocomp.core.backend import require
from autocomp.core.errors import AutocompError

DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"


class ChatClient:
    def __init__(self, model: str, base_url: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0,
                 max_retries: int = 5, concurrency: int = 8):
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
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
                                         timeout=self.timeout, max_retries=self.max_retries)
        return self._client

    def complete(self, messages: list[dict], **params) -> str:
        """The text of one completion ("" when the server's answer has none)."""
        import openai

        try:
            resp = self.client().chat.completions.create(model=self.model, messages=messages,
                                                         **params)
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise AutocompError(
                f"cannot reach the chat server at {self.base_url} ({type(exc).__name__} after "
                f"{self.max_retries} retries): start it, or set base_url / OPENAI_BASE_URL"
            ) from None
        except openai.APIStatusError as exc:
            raise AutocompError(
                f"the chat server at {self.base_url} refused the request ({exc.status_code}: "
                f"{_short(exc.message)}); check the model name '{self.model}' and the API key "
                f"in ${self.api_key_env}") from None
        try:
            content = resp.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            return ""
        return content if isinstance(content, str) else ""

    def complete_many(self, conversations: list[list[dict]], params: list[dict]) -> list[str]:
        if len(conversations) <= 1 or self.concurrency <= 1:
            return [self.complete(c, **p) for c, p in zip(conversations, params, strict=True)]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda cp: self.complete(cp[0], **cp[1]),
                                 zip(conversations, params, strict=True)))


def _short(text) -> str:
    return " ".join(str(text).split())[:160]
