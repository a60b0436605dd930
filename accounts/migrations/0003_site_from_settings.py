"""The Sites record names this site (MOMENTUM_SITE_URL, MOMENTUM_SITE_NAME), not
Django's example.com; accounts.sites keeps it so after every migrate."""

from urllib.parse import urlsplit

from django.conf import settings
from django.db import migrations


def name_the_site(apps, schema_editor):
    # accounts.sites.sync_site as it was written for this migration.
    Site = apps.get_model("sites", "Site")
    Site.objects.using(schema_editor.connection.alias).update_or_create(
        pk=settings.SITE_ID,
        defaults={
            "domain": urlsplit(settings.MOMENTUM_SITE_URL).netloc,
            "name": settings.MOMENTUM_SITE_NAME,
        },
    )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_feed_visited_at"),
        ("sites", "0002_alter_domain_unique"),
    ]

    operations = [migrations.RunPython(name_the_site, migrations.RunPython.noop)]
