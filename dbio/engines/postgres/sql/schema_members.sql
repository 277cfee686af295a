-- What a schema holds, each object with its comment; an extension's members are its extension.
SELECT d.classid::regclass::text AS catalog, d.objid AS oid,
       pg_describe_object(d.classid, d.objid, 0) AS object,
       obj_description(d.objid, d.classid::regclass::text) AS comment
FROM pg_depend d
WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = %(schema)s::regnamespace AND d.deptype = 'n'
  AND NOT EXISTS (SELECT FROM pg_depend e WHERE e.classid = d.classid AND e.objid = d.objid AND e.deptype = 'e')
ORDER BY 3
