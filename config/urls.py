from django.contrib import admin
from django.urls import include, path
from oauth2_provider import views as oauth_views

from accounts.forms import AdminSignInForm
from accounts.views import operators_only, signin_status
from mcp_gateway import views as mcp_views
from mcp_gateway.views import ConsentView
from memories import views as memory_views

admin.site.site_header = "Deep Recall operations"
admin.site.site_title = "Deep Recall admin"
# The admin signs in under the dashboard's limits; the path below adds its 429 status.
admin.site.login_form = AdminSignInForm

urlpatterns = [
    path("", memory_views.home, name="home"),
    # Answered by memories.views.HealthProbeMiddleware before host validation; listed for reverse().
    path("healthz", memory_views.healthz, name="healthz"),
    path("healthz/live", memory_views.healthz_live, name="healthz-live"),
    path("healthz/ready", memory_views.healthz_ready, name="healthz-ready"),
    path("accounts/", include("accounts.urls")),
    path("", include("memories.dashboard.urls")),
    path("", include("memories.dashboard.account_urls")),
    path("api/", include("memories.api.urls")),
    path("admin/login/", operators_only(signin_status(admin.site.login))),
    path("admin/", admin.site.urls),
    # OAuth 2.1 authorization server (django-oauth-toolkit) for MCP clients.
    path(
        "o/",
        include(
            (
                [
                    path("authorize/", ConsentView.as_view(), name="authorize"),
                    path("token/", mcp_views.with_cors(mcp_views.token), name="token"),
                    path(
                        "revoke_token/",
                        mcp_views.with_cors(oauth_views.RevokeTokenView.as_view()),
                        name="revoke-token",
                    ),
                    path("register/", mcp_views.with_cors(mcp_views.register_client), name="dcr-register"),
                    path(
                        "register/<str:client_id>/",
                        mcp_views.with_cors(mcp_views.manage_registration),
                        name="dcr-register-management",
                    ),
                ],
                "oauth2_provider",
            )
        ),
    ),
    path(
        ".well-known/oauth-authorization-server",
        mcp_views.with_cors(oauth_views.OAuthServerMetadataView.as_view()),
        name="oauth-server-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource",
        mcp_views.with_cors(mcp_views.protected_resource_metadata),
        name="oauth-resource-metadata",
    ),
    path(
        ".well-known/oauth-protected-resource/<path:resource_path>",
        mcp_views.with_cors(mcp_views.protected_resource_metadata),
        name="oauth-resource-metadata-path",
    ),
]

handler400 = "memories.api.base.handler400"
handler404 = "memories.api.base.handler404"
handler500 = "memories.api.base.handler500"
