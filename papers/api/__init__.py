"""The papers app's API resources, one module each: papers, the caller's
library (saved and rated), followed authors, and ingestion for staff
(config/api_router.py routes them)."""
