"""Django's PostgreSQL backend, with one change for keys that carry the owner (docs/scale.md)."""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base, features


class DatabaseFeatures(features.DatabaseFeatures):
    def allows_group_by_selected_pks_on_model(self, model: Any) -> bool:
        # A tenant table's primary key is (owner_id, id) in the database while Django's is `id`
        # (migration 0029): grouping by `id` alone no longer lets PostgreSQL take the row's other
        # columns as determined by it, so Django groups by every selected column of such a model.
        if any(field.column == "owner_id" for field in model._meta.concrete_fields):
            return False
        return bool(super().allows_group_by_selected_pks_on_model(model))


class DatabaseWrapper(base.DatabaseWrapper):
    features_class = DatabaseFeatures
