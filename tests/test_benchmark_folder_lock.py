"""A benchmark's kept data folder (an ingest cache) is used by one run at a time: a second run on it
stops at once with a message, before it starts a service on the first one's database."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks._service import FolderInUse, hold_folder, running_service


def test_a_second_hold_of_a_folder_is_refused_until_the_first_ends(tmp_path: Path) -> None:
    first = hold_folder(tmp_path)
    with pytest.raises(FolderInUse, match="another benchmark run is using"):
        hold_folder(tmp_path)
    first.close()
    hold_folder(tmp_path).close()


def test_a_service_on_a_folder_in_use_is_never_started(tmp_path: Path) -> None:
    with hold_folder(tmp_path), pytest.raises(FolderInUse), running_service(var_dir=tmp_path):
        pass
    # It stopped before starting anything: a service writes its log first.
    assert not (tmp_path / "service.log").exists()
