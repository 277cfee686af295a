-- Objects DROP TABLE removes with the table without being asked (indexes, statistics objects,
-- triggers, policies, rules, constraints, owned sequences), each with its comment. The columns'
-- NOT NULL constraints and defaults are part of the table's columns; views and foreign keys are not
-- listed: they make DROP TABLE fail instead.
SELECT DISTINCT pg_describe_object(d.classid, d.objid, 0) AS object,
       obj_description(d.objid, d.classid::regclass::text) AS comment
FROM pg_depend d
LEFT JOIN pg_constraint c ON d.classid = 'pg_constraint'::regclass AND c.oid = d.objid
WHERE d.refclassid = 'pg_class'::regclass AND d.refobjid = %(table)s::regclass AND d.deptype = 'a'
  AND c.contype IS DISTINCT FROM 'n' AND d.classid <> 'pg_attrdef'::regclass
ORDER BY 1
