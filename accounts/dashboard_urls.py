"""Routes of the account pages (namespace `account`), included at the site root."""

from django.urls import path

from accounts import dashboard_views as views

app_name = "account"

urlpatterns = [
    path("account/", views.account, name="account"),
    path("account/password/", views.PasswordChangeView.as_view(), name="password-change"),
    path("account/export/", views.export_download, name="export"),
    path("account/delete/", views.account_delete, name="delete"),
    path("account/tokens/", views.token_list, name="tokens"),
    path("account/tokens/<uuid:token_id>/revoke", views.token_revoke, name="token-revoke"),
    path("account/apps/", views.app_list, name="apps"),
    path("account/apps/<int:application_id>/revoke", views.app_revoke, name="app-revoke"),
    path("account/password-reset/", views.PasswordResetView.as_view(), name="password-reset"),
    path("account/password-reset/sent/", views.PasswordResetDoneView.as_view(), name="password-reset-done"),
    path(
        "account/password-reset/<uidb64>/<token>/",
        views.PasswordResetConfirmView.as_view(),
        name="password-reset-confirm",
    ),
    path(
        "account/password-reset/done/",
        views.PasswordResetCompleteView.as_view(),
        name="password-reset-complete",
    ),
]
