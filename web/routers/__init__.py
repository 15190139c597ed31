"""The web app's routes, one router per resource; `web.app.create_app` includes them."""
