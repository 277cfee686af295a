-- Only ever an index whose tag comment names the loaded setup (checked before, in the same transaction).
DROP INDEX {schema}.{index};
