SELECT pg_relation_size(to_regclass(%(qualified)s));
