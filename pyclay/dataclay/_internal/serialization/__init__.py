"""Python serialisation (docs/internals.md): pickle protocol 5 per field, dataClay objects as
persistent IDs ("dc", id, class_name, backend_hint), and restricted unpicklers."""
