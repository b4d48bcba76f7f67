"""Listings of what is stored (datasets, aliases, objects of a class), as iterators that ask the Logic
Module for the next page only when the one before is used up. Each page is asked in the session current
at that moment, and shows only what that session may see then."""
from __future__ import annotations

from typing import AsyncIterator, Callable, Iterator

from dataclay.exceptions import InvalidArgumentError
from dataclay._internal.records import AliasRecord, DatasetRecord, ObjectInfoRecord
from dataclay._internal.runtime.router import LOOKUP_TIMEOUT


def class_name(cls_or_name) -> str:
    """The stored name of a class given as a DataClayObject subclass (or a stub of one) or as text; "" for
    None (every class)."""
    if cls_or_name is None:
        return ""
    if isinstance(cls_or_name, str):
        return cls_or_name
    name = getattr(cls_or_name, "_dc_class_name", None)
    if isinstance(cls_or_name, type) and isinstance(name, str):
        return name
    raise InvalidArgumentError(f"a class to list must be a DataClayObject subclass or a class name such as "
                               f"'package.module.Class', not {cls_or_name!r}")


def _text(value, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be text, not {type(value).__name__}")
    return value


def _size(page_size) -> int:
    if isinstance(page_size, bool) or not isinstance(page_size, int) or page_size < 0:
        raise InvalidArgumentError(f"page_size must be a whole number >= 0 (0: the Logic Module's default), "
                                   f"not {page_size!r}")
    return page_size


def datasets(lm: Callable, count_objects: bool = True, page_size: int = 0) -> Iterator[DatasetRecord]:
    """DatasetRecords of the datasets the session may see, by name; `lm()` gives the Logic Module client."""
    size = _size(page_size)
    return _pages(lambda token: lm().list_datasets(size, token, bool(count_objects), timeout=LOOKUP_TIMEOUT),
                  "datasets")


def aliases(lm: Callable, pattern: str = "*", dataset: str | None = None, page_size: int = 0) -> Iterator[AliasRecord]:
    """AliasRecords of the aliases matching `pattern`, in `dataset` or every dataset the session may see."""
    glob, ds, size = _text(pattern, "pattern"), _text(dataset, "dataset"), _size(page_size)
    return _pages(lambda token: lm().list_aliases(glob, ds, size, token, timeout=LOOKUP_TIMEOUT), "aliases")


def objects(lm: Callable, cls_or_class_name=None, dataset: str | None = None,
            page_size: int = 0) -> Iterator[ObjectInfoRecord]:
    """ObjectInfoRecords of the objects of a class (None: every class), in `dataset` or every dataset the
    session may see."""
    name, ds, size = class_name(cls_or_class_name), _text(dataset, "dataset"), _size(page_size)
    return _pages(lambda token: lm().list_objects(name, ds, size, token, timeout=LOOKUP_TIMEOUT), "objects")


def _pages(fetch: Callable, field: str) -> Iterator:
    token = ""
    while True:
        page = fetch(token)
        yield from getattr(page, field)
        token = page.next_page_token
        if not token:
            return


# ---- asyncio twins: `lm()` gives an AsyncLogicModuleClient of the running event loop ----


def a_datasets(lm: Callable, count_objects: bool = True, page_size: int = 0) -> AsyncIterator[DatasetRecord]:
    """datasets(), as an asynchronous iterator (`async for`)."""
    size = _size(page_size)
    return _a_pages(lambda token: lm().list_datasets(size, token, bool(count_objects), timeout=LOOKUP_TIMEOUT),
                    "datasets")


def a_aliases(lm: Callable, pattern: str = "*", dataset: str | None = None,
              page_size: int = 0) -> AsyncIterator[AliasRecord]:
    """aliases(), as an asynchronous iterator (`async for`)."""
    glob, ds, size = _text(pattern, "pattern"), _text(dataset, "dataset"), _size(page_size)
    return _a_pages(lambda token: lm().list_aliases(glob, ds, size, token, timeout=LOOKUP_TIMEOUT), "aliases")


def a_objects(lm: Callable, cls_or_class_name=None, dataset: str | None = None,
              page_size: int = 0) -> AsyncIterator[ObjectInfoRecord]:
    """objects(), as an asynchronous iterator (`async for`)."""
    name, ds, size = class_name(cls_or_class_name), _text(dataset, "dataset"), _size(page_size)
    return _a_pages(lambda token: lm().list_objects(name, ds, size, token, timeout=LOOKUP_TIMEOUT), "objects")


async def _a_pages(fetch: Callable, field: str) -> AsyncIterator:
    token = ""
    while True:
        page = await fetch(token)
        for entry in getattr(page, field):
            yield entry
        token = page.next_page_token
        if not token:
            return
