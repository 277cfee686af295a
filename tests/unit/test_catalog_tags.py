"""Which comments mark an object as dbio's (no server needed)."""

import pytest

from dbio.engines.postgres import catalog

ID = "0123456789ab"
OTHER = "ba9876543210"


@pytest.mark.parametrize("comment, setup_id", [
    (catalog.tag(ID), ID),
    ("dbio: created by dbio 0.1.0 for setup 0123456789ab; dbio teardown removes it", ID),  # an earlier version's
    ("dbio: my scratch table", None),                          # begins with "dbio:" and nothing more
    ("dbio: created by dbio 0.1.0 for setup 42; dbio teardown removes it", None),  # not a setup id
    (catalog.tag(ID) + " (copied)", None),
    ("note: " + catalog.tag(ID), None),
    (catalog.LEGACY_LOOP_TAG, None),                           # trusted only for the loop, in dbio's schema
    ("", None),
    (None, None),
])
def test_tag_id(comment, setup_id):
    assert catalog.tag_id(comment) == setup_id


@pytest.mark.parametrize("schema_tag, record_tag, recorded, owner", [
    (catalog.tag(ID), catalog.tag(ID), [ID], ID),              # a setup
    (catalog.tag(ID), catalog.tag(ID), [], ID),                # kept by teardown, record emptied
    (catalog.tag(ID), None, [], None),                         # no setup table: nothing vouches for the schema
    (catalog.tag(ID), catalog.tag(OTHER), [ID], None),
    (catalog.tag(ID), catalog.tag(ID), [OTHER], None),         # the record names another setup
    ("dbio: created by hand", "dbio: created by hand", [], None),
    (None, catalog.tag(ID), [ID], None),
])
def test_control_owner(schema_tag, record_tag, recorded, owner):
    assert catalog.control_owner(schema_tag, record_tag, recorded) == owner


@pytest.mark.parametrize("name, clash", [("dbio", True), ("dbio_1", True), ("dbio_12", True), ("dbio_x", False),
                                          ("dbiouser", False), ("postgres", False)])
def test_role_names_that_are_dbio_schemas(name, clash):
    assert catalog.is_dbio_schema_name(name) is clash


@pytest.mark.parametrize("search_path, reaches", [('"$user", public', True), ("$user,public", True),
                                                  ("public", False), ("dbio, public", True), ("public, dbio_x", False)])
def test_search_path_reaching_the_roles_own_schema(search_path, reaches):
    assert catalog.reaches_user_schema(search_path, "dbio") is reaches
