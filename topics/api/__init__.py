"""The topics app's API resources, one module each: topics, follows, flags,
recommendations (For you) and saved searches (config/api_router.py routes them)."""
