"""Cloud identity formats (pure): the Google service account emails and IAM role ARNs that model
namespaces bind to, checked by the stack config and by `ModelNamespace` alike."""

import re

GSA_EMAIL = re.compile(
    r"[a-z][-a-z0-9]{4,28}[a-z0-9]@(?P<project>[-a-z0-9.:]+)\.iam\.gserviceaccount\.com"
)
ROLE_ARN = re.compile(r"arn:aws[-a-z]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}")
