"""Routes of the account pages and sign-up (namespace `account`), included at the site root."""

from django.urls import path

from memories.dashboard.account import (
    PasswordChangeView,
    PasswordResetCompleteView,
    PasswordResetConfirmView,
    PasswordResetDoneView,
    PasswordResetView,
    account,
    account_delete,
    app_list,
    app_revoke,
    export_download,
    signup,
    time_zone_set,
    token_list,
    token_revoke,
)

app_name = "account"

urlpatterns = [
    path("accounts/signup/", signup, name="signup"),
    path("account/", account, name="account"),
    path("account/time-zone/", time_zone_set, name="time-zone"),
    path("account/password/", PasswordChangeView.as_view(), name="password-change"),
    path("account/export/", export_download, name="export"),
    path("account/delete/", account_delete, name="delete"),
    path("account/tokens/", token_list, name="tokens"),
    path("account/tokens/<uuid:token_id>/revoke", token_revoke, name="token-revoke"),
    path("account/apps/", app_list, name="apps"),
    path("account/apps/<int:application_id>/revoke", app_revoke, name="app-revoke"),
    path("account/password-reset/", PasswordResetView.as_view(), name="password-reset"),
    path("account/password-reset/sent/", PasswordResetDoneView.as_view(), name="password-reset-done"),
    path(
        "account/password-reset/<uidb64>/<token>/",
        PasswordResetConfirmView.as_view(),
        name="password-reset-confirm",
    ),
    path(
        "account/password-reset/done/",
        PasswordResetCompleteView.as_view(),
        name="password-reset-complete",
    ),
]
