"""Full-text search on PostgreSQL: a trigger keeps Paper.search_vector current.

Weights: title A, authors B, abstract C. Authors use the 'simple' configuration
so names are not stemmed. On SQLite this migration does nothing; FTS5 tables serve
search there (migration 0005, papers/search.py).
"""

from django.db import migrations

CREATE = """
CREATE FUNCTION papers_paper_search_vector_update() RETURNS trigger AS $$
BEGIN
    NEW.search_vector :=
        setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A') ||
        setweight(to_tsvector('simple', coalesce(NEW.author_names, '')), 'B') ||
        setweight(to_tsvector('english', coalesce(NEW.abstract, '')), 'C');
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER papers_paper_search_vector_trigger
    BEFORE INSERT OR UPDATE OF title, author_names, abstract ON papers_paper
    FOR EACH ROW EXECUTE FUNCTION papers_paper_search_vector_update();

-- Serves the @@ match of every search query.
CREATE INDEX paper_search_vector_gin ON papers_paper USING gin (search_vector);
"""

DROP = """
DROP INDEX IF EXISTS paper_search_vector_gin;
DROP TRIGGER IF EXISTS papers_paper_search_vector_trigger ON papers_paper;
DROP FUNCTION IF EXISTS papers_paper_search_vector_update();
"""


def run_on_postgresql(sql):
    def operation(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return operation


class Migration(migrations.Migration):
    dependencies = [("papers", "0001_initial")]

    operations = [
        migrations.RunPython(run_on_postgresql(CREATE), run_on_postgresql(DROP)),
    ]
