"""Classes written the dataClay 4 way, for tests/test_dataclay4_semantics.py."""
from __future__ import annotations

import io

from dataclay import DataClayObject, activemethod
from dataclay.config import get_runtime
from dataclay.event_loop import run_dc_coroutine


class Member(DataClayObject):
    name: str
    age: int
    spouse: Member

    @activemethod
    def __init__(self, name, age):
        self.name = name
        self.age = age
        self.spouse = None

    @activemethod
    def add_year(self):
        self.age += 1
        return self.age


class Family(DataClayObject):
    members: list

    @activemethod
    def __init__(self, *members):
        self.members = list(members)

    @activemethod
    def add(self, member):
        self.members.append(member)

    @activemethod
    def names(self):
        return [m.name for m in self.members]

    @activemethod
    def made_inside(self):
        """What dataClay 4 model code sees of objects it makes: persistent at once, stored here."""
        kept, dropped = Member("kept", 1), Member("dropped", 2)
        seen = {"is_persistent": kept.is_persistent is True, "registered": kept._dc_is_registered,
                "master_is_here": kept._dc_meta.master_backend_id == get_runtime().backend_id,
                "dropped_id": dropped.getID()}
        named = Member("named", 3)
        named.make_persistent(alias=f"named-{self.getID()}")
        seen["aliases"] = sorted(named.get_aliases())
        self.members.append(kept)  # reachable from stored state: stored at the end of the call
        return seen

    @activemethod
    def flag_kind(self):
        """How model code sees is_persistent: a bool for a dataClay 4 program, the callable flag for dataClay 2."""
        flag = self.is_persistent
        return "bool" if flag is True else ("callable" if callable(flag) and flag() is True else repr(flag))

    @activemethod
    def unload_while_running(self):
        """flush_all inside a call keeps this call's objects; what it made is stored and reloaded afresh."""
        members = self.members
        other = Family()
        other_members = other.members
        run_dc_coroutine(get_runtime().data_manager.flush_all)
        members.append(Member("late", 9))
        self.members = members
        return {"self_kept": members is self.members, "other_reloaded": other_members is not other.members}


class Reader(DataClayObject):
    """Holds an open text stream, which cannot be pickled: __getstate__ drops it, __setstate__ reopens it."""

    text: str
    position: int

    def __init__(self, text):
        self.text = text
        self.position = 0
        self.stream = io.StringIO(text)

    @activemethod
    def read_word(self):
        word = self.stream.readline().strip()
        self.position += 1
        return word

    @activemethod
    def peek(self):
        """The next word, without reading it: changes nothing stored, so a replica may answer it."""
        at = self.stream.tell()
        word = self.stream.readline().strip()
        self.stream.seek(at)
        return word

    def __getstate__(self):
        return {"text": self.text, "position": self.position}

    def __setstate__(self, state):
        self.text = state["text"]
        self.position = state["position"]
        self.stream = io.StringIO(self.text)
        for _ in range(self.position):
            self.stream.readline()


class Box(DataClayObject):
    value: object

    @activemethod
    def __init__(self, value=None):
        self.value = value


class Plain:
    """Not a dataClay class: stored through AlienDataClayObject."""

    def __init__(self, x):
        self.x = x

    def double(self):
        self.x *= 2
        return self.x
