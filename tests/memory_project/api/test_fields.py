"""Serializers whose fields are built once per class (FieldsBuiltOnce)."""

from rest_framework import serializers

from memory_project.api.fields import CleanCharField, FieldsBuiltOnce, StrictSerializer


class _Tags(StrictSerializer):
    name = CleanCharField(max_length=5)
    tags = serializers.ListField(child=CleanCharField(max_length=3), required=False, max_length=2)


class _CountingBuilds(serializers.Serializer):
    builds = 0

    def get_fields(self):
        _CountingBuilds.builds += 1
        return super().get_fields()


class _Built(FieldsBuiltOnce, _CountingBuilds):
    label = serializers.CharField()


def test_fields_are_built_once_per_class():
    # given a serializer class whose fields were never read
    before = _CountingBuilds.builds

    # when three instances serialize
    shown = [_Built({"label": text}).data for text in ("a", "b", "c")]

    # then each showed its own value, from fields DRF built once
    assert shown == [{"label": "a"}, {"label": "b"}, {"label": "c"}]
    assert _CountingBuilds.builds - before == 1


def test_each_instance_binds_its_own_copies_of_fields_built_once():
    # given two instances of one serializer class
    first, second = _Tags(data={"name": "a"}), _Tags(data={"name": "b"})

    # when both read their fields
    one, two = first.fields, second.fields

    # then each field is its own object, bound to its own serializer, with the settings declared
    assert one["name"] is not two["name"] and one["tags"] is not two["tags"]
    assert (one["name"].parent, two["name"].parent) == (first, second)
    assert (one["name"].max_length, one["name"].source_attrs) == (5, ["name"])
    # and a list's child is a copy bound to the list of its own serializer
    assert one["tags"].child is not two["tags"].child
    assert (one["tags"].child.parent, two["tags"].child.parent) == (one["tags"], two["tags"])
    assert one["tags"].child.root is first
    # and the class kept one built set, which no instance is bound to
    built = _Tags.__dict__["_fields_built"]
    assert set(built) == {"name", "tags"}
    assert (built["name"].parent, built["name"].field_name) == (None, None)


def test_validation_of_one_instance_leaves_the_next_untouched():
    # given a serializer refused for a too long name and a too long tag
    bad = _Tags(data={"name": "toolong", "tags": ["abcd"]})
    assert not bad.is_valid()

    # when another instance validates good data
    good = _Tags(data={"name": "ok", "tags": ["a", "b"]})

    # then it is valid with exactly its own data, and the first keeps its own errors
    assert good.is_valid(), good.errors
    assert good.validated_data == {"name": "ok", "tags": ["a", "b"]}
    assert bad.errors == {
        "name": ["Ensure this field has no more than 5 characters."],
        "tags": {0: ["Ensure this field has no more than 3 characters."]},
    }


def test_a_subclass_builds_its_own_fields():
    # given a subclass adding a field to a class whose fields are already built
    class _More(_Tags):
        extra = CleanCharField(required=False)

    assert set(_Tags(data={}).fields) == {"name", "tags"}

    # when the subclass reads its fields
    fields = _More(data={}).fields

    # then it has its own set, and the parent class's is unchanged
    assert set(fields) == {"name", "tags", "extra"}
    assert set(_Tags.__dict__["_fields_built"]) == {"name", "tags"}
