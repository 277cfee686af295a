-- The privileges the connected account holds on the DSN's database (setup's preflight): its
-- global ones (ON *.*) and those on a database pattern the database's name matches (ON `db`.*,
-- ON `db\_%`.*). Privileges a role gives are not in these views: the caller skips the check then.
SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = %(grantee)s
UNION
SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES
 WHERE GRANTEE = %(grantee)s AND DATABASE() LIKE TABLE_SCHEMA
