"""Authors get a normalised key (papers.identity): those whose printed names
differ only in case, accents, spaces or punctuation are merged into one, and
readers can follow an author."""

import django.db.models.deletion
from django.conf import settings
import re
import unicodedata
from collections import Counter, defaultdict

from django.db import migrations, models
from django.db.models import Count

# papers.identity's author_key and merge_authors as they were written for this
# migration: a migration keeps its meaning, should the app's code change.
MAX_KEY_LENGTH = 400
SEPARATORS = re.compile(r"[\W_]+")
BATCH = 5000


def author_key(name):
    decomposed = unicodedata.normalize("NFKD", name)
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    return SEPARATORS.sub(" ", bare.casefold()).strip()[:MAX_KEY_LENGTH]


def merge(apps, schema_editor):
    """Every author gets its key; the authors whose keys collide become the one
    with the most papers (the first seen when tied), their authorships moved."""
    Author = apps.get_model("papers", "Author")
    Authorship = apps.get_model("papers", "Authorship")
    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        # Deferred foreign-key checks would otherwise still be pending when the
        # migration then alters the table.
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    papers = Counter(
        dict(
            Authorship.objects.values("author_id")
            .annotate(n=Count("*"))
            .values_list("author_id", "n")
        )
    )
    by_key = defaultdict(list)
    for pk, name in Author.objects.order_by("pk").values_list("pk", "name"):
        by_key[author_key(name)].append(pk)
    merged = {}
    for ids in by_key.values():
        if len(ids) > 1:
            keeper = max(ids, key=lambda pk: (papers[pk], -pk))
            merged.update((pk, keeper) for pk in ids if pk != keeper)
    for pk, keeper in merged.items():
        Authorship.objects.filter(author_id=pk).update(author_id=keeper)
    Author.objects.filter(pk__in=list(merged)).delete()
    # Keys are written once those merged away are gone: the key is unique.
    keyed = [
        Author(pk=next(pk for pk in ids if pk not in merged), key=key)
        for key, ids in by_key.items()
    ]
    for start in range(0, len(keyed), BATCH):
        Author.objects.bulk_update(keyed[start : start + BATCH], ["key"])
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")


class Migration(migrations.Migration):

    dependencies = [
        ("papers", "0007_similar_papers"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='author',
            name='name',
            field=models.CharField(max_length=300),
        ),
        migrations.AddField(
            model_name='author',
            name='key',
            field=models.CharField(max_length=400, null=True),
        ),
        migrations.RunPython(merge, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='author',
            name='key',
            field=models.CharField(max_length=400, unique=True),
        ),
        migrations.CreateModel(
            name='AuthorFollow',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('author', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='follows', to='papers.author')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='author_follows', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['created_at', 'pk'],
                'constraints': [models.UniqueConstraint(fields=('user', 'author'), name='author_follow_unique')],
            },
        ),
    ]
