"""Authors get a normalised key (papers.identity): those whose printed names
differ only in case, accents, spaces or punctuation are merged into one, and
readers can follow an author."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from papers.identity import merge_authors


def merge(apps, schema_editor):
    merge_authors(apps.get_model("papers", "Author"), apps.get_model("papers", "Authorship"))


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
