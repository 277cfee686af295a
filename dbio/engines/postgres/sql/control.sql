-- dbio's control schema. Its comment and the comment of its setup table name the setup they
-- belong to: that pair is what makes every other tag trustworthy.
CREATE SCHEMA dbio;
COMMENT ON SCHEMA dbio IS {tag};
