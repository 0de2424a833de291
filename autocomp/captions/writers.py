"""Contextual caption writers and the loop that runs them: write, check, retry, drop.

A writer turns a batch of `CaptionRequest`s into one caption each. The loop is the same for
every writer (template, transformers, openai): attempt 0 with the paper's prompt; every
concept whose caption fails the semantic-preservation check is asked again, with the
more insistent prompt, up to `retries` more times; a concept still failing is dropped
(its minimal caption too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from autocomp.captions.prompts import contextual_prompt
from autocomp.concepts.task import Task
from autocomp.core.scene import SceneGraph
from autocomp.language.check import check_caption


@dataclass(frozen=True)
class CaptionRequest:
    id: str
    graph: SceneGraph
    task: Task
    seed: int
    attempt: int
    system: str
    user: str


def write_with_retries(writer, concepts: Sequence[tuple[str, SceneGraph, Task, int]],
                       retries: int) -> dict[str, dict]:
    """concept id -> {"caption", "check", "attempts", "tried"}; caption None when dropped."""
    out: dict[str, dict] = {}
    pending = list(concepts)
    for attempt in range(retries + 1):
        if not pending:
            break
        requests = []
        for cid, graph, task, seed in pending:
            system, user = contextual_prompt(graph, task, attempt)
            requests.append(CaptionRequest(cid, graph, task, seed, attempt, system, user))
        captions = writer.write(requests)
        still = []
        for (cid, graph, task, seed), caption in zip(pending, captions, strict=True):
            caption = " ".join(str(caption).split())
            result = check_caption(caption, graph, task.noun, task.object_forms)
            entry = out.setdefault(cid, {"tried": []})
            entry["attempts"] = attempt + 1
            if result.passed:
                entry.update(caption=caption, check=result.to_dict())
            else:
                entry["tried"].append({"caption": caption, "failed": list(result.failed)})
                still.append((cid, graph, task, seed))
        pending = still
    for cid, *_ in pending:
        out[cid].update(caption=None, check=None)
    return out
