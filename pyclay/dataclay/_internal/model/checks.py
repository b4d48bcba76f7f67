"""Argument checks of the object API: each returns the canonical value or raises InvalidArgumentError
saying which argument is wrong and why."""
from __future__ import annotations

import uuid

from dataclay.exceptions import InvalidArgumentError


def alias_text(alias, operation: str) -> str:
    """`alias` if it is a non-empty string."""
    if not isinstance(alias, str) or not alias:
        raise InvalidArgumentError(f"{operation}(): alias must be a non-empty string, not {alias!r}")
    return alias


def optional_alias(alias, operation: str) -> str | None:
    """`alias` if it is None or a non-empty string."""
    return None if alias is None else alias_text(alias, operation)


def backend_text(backend_id) -> str | None:
    """The canonical text of a backend ID given as UUID or text (None stays None)."""
    if backend_id is None:
        return None
    try:
        return str(backend_id if isinstance(backend_id, uuid.UUID) else uuid.UUID(str(backend_id)))
    except ValueError:
        raise InvalidArgumentError(f"backend_id must be a backend UUID, not {backend_id!r}") from None


def check_recursive(recursive, name: str = "recursive") -> bool:
    """`recursive` (or another flag called `name`) if it is True or False."""
    if not isinstance(recursive, bool):
        raise InvalidArgumentError(f"{name} must be True or False, not {recursive!r}")
    return recursive


def move_target(backend_id, recursive, remotes, operation: str) -> str:
    """The canonical text of the backend `operation` (move or a_move) moves to: required, with its
    flags `recursive` and `remotes` True or False."""
    if backend_id is None:
        raise InvalidArgumentError(f"{operation}() needs the backend_id of the backend to move the object to")
    check_recursive(recursive)
    check_recursive(remotes, "remotes")
    return backend_text(backend_id)


def dataset_argument(dataset_name, dataset) -> str | None:
    """The dataset named by dataClay 4's `dataset_name` or this API's `dataset` (None: the session's)."""
    for value, name in ((dataset_name, "dataset_name"), (dataset, "dataset")):
        if value is not None and (not isinstance(value, str) or not value):
            raise InvalidArgumentError(f"{name} must be a non-empty string or None, not {value!r}")
    if dataset_name is not None and dataset is not None and dataset_name != dataset:
        raise InvalidArgumentError(f"dataset_name={dataset_name!r} and dataset={dataset!r} name two datasets: "
                                   f"give one")
    return dataset_name if dataset_name is not None else dataset
