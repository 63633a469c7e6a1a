"""Cloud identity formats and rules (pure): the Google service account emails and IAM role ARNs that model
namespaces bind to, checked by the stack config and by `ModelNamespace` alike."""

import re
from typing import Optional

from ..errors import InputError, show

GSA_EMAIL = re.compile(
    r"[a-z][-a-z0-9]{4,28}[a-z0-9]@(?P<project>[-a-z0-9.:]+)\.iam\.gserviceaccount\.com"
)
ROLE_ARN = re.compile(r"arn:aws[-a-z]*:iam::[0-9]{12}:role/[\w+=,.@/-]{1,512}")


def validate_workload_identity(
    gcp_service_account: Optional[str], aws_role_arn: Optional[str]
) -> None:
    """One cloud identity at most, each in its cloud's format; paths relative to
    `workloadIdentity`."""
    if gcp_service_account and aws_role_arn:
        raise InputError(
            "both gcpServiceAccount and awsRoleArn are given; a ServiceAccount binds to one "
            "cloud identity",
            "gcpServiceAccount (GKE) or awsRoleArn (EKS)",
            "awsRoleArn",
        )
    if gcp_service_account and not GSA_EMAIL.fullmatch(gcp_service_account):
        raise InputError(
            f"{show(gcp_service_account)} is not a Google service account email",
            "NAME@PROJECT.iam.gserviceaccount.com",
            "gcpServiceAccount",
        )
    if aws_role_arn and not ROLE_ARN.fullmatch(aws_role_arn):
        raise InputError(
            f"{show(aws_role_arn)} is not an IAM role ARN",
            "arn:aws:iam::123456789012:role/NAME",
            "awsRoleArn",
        )
