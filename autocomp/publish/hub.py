"""--push-to-hub REPO: the export folder, exactly as it is on disk, uploaded as a dataset
repo through huggingface_hub (create_repo, then upload_folder). Offline (HF_HUB_OFFLINE=1,
or no network) it is one line saying so; the folder stays where it is."""

from __future__ import annotations

from pathlib import Path

from autocomp.core.errors import AutocompError


def push(folder: Path, repo_id: str) -> str:
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:  # its own reading of HF_HUB_OFFLINE
        raise AutocompError(f"cannot push to the hub: HF_HUB_OFFLINE is set; the export is "
                            f"in {folder} (upload it later with `hf upload --repo-type "
                            f"dataset {repo_id} {folder}`)")
    from huggingface_hub import HfApi

    api = HfApi()
    try:
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        info = api.upload_folder(folder_path=str(folder), repo_id=repo_id,
                                 repo_type="dataset",
                                 commit_message="autocomp export")
    except Exception as exc:  # no network, no token, no rights: one line
        raise AutocompError(f"cannot push to the hub ({type(exc).__name__}: "
                            f"{str(exc)[:160]}); the export is in {folder}") from None
    return f"pushed {folder} -> {getattr(info, 'commit_url', repo_id)}"
