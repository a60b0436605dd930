"""The REST API's shared parts, used by every app's api.py: the error shape,
strict fields and pagination, bounded JSON bodies, the schema additions and
conditional responses under the content version."""
