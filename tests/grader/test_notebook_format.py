"""nbgrader's metadata validation with its schema checked once per process
(``grader.notebook_format.check_schema_once``): the same verdicts and errors, the meta-schema
check not repeated for every cell."""

import jsonschema
import nbformat
import pytest
from nbgrader.nbgraderformat import MetadataValidator, common

from grader.notebook_format import check_schema_once


def _cell(**metadata):
    cell = nbformat.v4.new_code_cell("x = 1")
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": "a", "locked": False,
                                 "schema_version": 3, "solution": True, **metadata}
    return cell


BROKEN = [{"grade": "yes"}, {"points": "two", "grade": True}, {"grade_id": 3},
          {"unknown_key": 1}]


@pytest.mark.parametrize("metadata", BROKEN)
def test_invalid_metadata_raises_what_jsonschema_validate_raises(metadata):
    """Is a broken cell's metadata refused with the error jsonschema.validate gives, once the
    schema is checked once only?"""
    cell = _cell(**metadata)
    schema = MetadataValidator().schema
    with pytest.raises(jsonschema.ValidationError) as plain:
        jsonschema.validate(cell.metadata["nbgrader"], schema)
    check_schema_once()
    with pytest.raises(jsonschema.ValidationError) as once:
        MetadataValidator().validate_cell(cell)
    assert (once.value.message, list(once.value.path)) == \
        (plain.value.message, list(plain.value.path))


def test_the_schema_is_checked_once(monkeypatch):
    """Does validating many notebooks check nbgrader's schema against the meta-schema at most
    once, and does a second call leave the wrapper as it is?"""
    check_schema_once()
    wrapper = common.jsonschema
    check_schema_once()
    assert common.jsonschema is wrapper
    kind = jsonschema.validators.validator_for(MetadataValidator().schema)
    checks = []
    original = kind.check_schema
    monkeypatch.setattr(kind, "check_schema",
                        classmethod(lambda cls, schema: checks.append(1) or original(schema)))
    notebook = nbformat.v4.new_notebook(cells=[_cell(grade_id=f"c{i}") for i in range(20)])
    for _ in range(3):
        MetadataValidator().validate_nb(notebook)
    assert len(checks) <= 1
