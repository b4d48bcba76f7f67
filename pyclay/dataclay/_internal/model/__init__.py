"""The object model: DataClayObject, its persistent fields, active methods and identity map."""
