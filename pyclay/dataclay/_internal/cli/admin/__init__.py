"""`dataclaycmd`, the administration tool: accounts, datasets, contracts, models, listings."""
