"""The Sites record names this site (MOMENTUM_SITE_URL, MOMENTUM_SITE_NAME), not
Django's example.com; accounts.sites keeps it so after every migrate."""

from django.db import migrations


def name_the_site(apps, schema_editor):
    from accounts.sites import sync_site

    sync_site(apps.get_model("sites", "Site"), using=schema_editor.connection.alias)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_feed_visited_at"),
        ("sites", "0002_alter_domain_unique"),
    ]

    operations = [migrations.RunPython(name_the_site, migrations.RunPython.noop)]
