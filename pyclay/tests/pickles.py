"""Pickles the unit tests write by hand: ones holding a persistent reference of the tests' choosing."""
import io
import pickle


def pickle_with_pid(pid, in_list: bool = False) -> bytes:
    """A protocol-5 pickle of one object that pickles as persistent id `pid` (inside a list when
    `in_list`): what a peer could send, well formed or not."""

    class Marker:
        pass

    marker = Marker()

    class Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            return pid if obj is marker else None

    out = io.BytesIO()
    Pickler(out, 5).dump([marker] if in_list else marker)
    return out.getvalue()
