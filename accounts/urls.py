from django.urls import path

from accounts.views import LoginView, LogoutView, signin_status

app_name = "accounts"

urlpatterns = [
    path("login/", signin_status(LoginView.as_view()), name="login"),
    path("logout/", LogoutView.as_view(), name="logout"),
]
