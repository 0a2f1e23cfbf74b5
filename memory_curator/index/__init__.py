"""The derived SQLite/FTS5 index of the vault and the queriers that answer a decision's questions."""
