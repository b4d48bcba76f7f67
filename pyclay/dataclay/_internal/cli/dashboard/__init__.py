"""`dataclay dashboard`: the administrators' web dashboard (a few static files and a JSON API) and `dataclay locate`."""
