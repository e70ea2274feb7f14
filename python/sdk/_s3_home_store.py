"""The saved home in S3 under the sandbox's execution role (SPEC "Authentication" 3), with boto3: the
caller's own credentials (boto3's standard chain) assume ``execution_role_arn`` with STS, and the role's
temporary credentials make the S3 client, so the role, not the caller, reaches the bucket
(``sdk/s3-home-store.ts``). boto3 is imported on first use: importing the package loads no AWS code.

Every method blocks (the async SDK runs them in a worker thread). Every failure is a
``SandboxException`` naming the bucket, the key or the role and AWS's error code, never AWS's text or a
credential.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Iterator

from .errors import SandboxException
from .s3_prefix import S3Prefix

#: Lifetime of the role's credentials: one save or restore, which starts with a new assume.
ROLE_SESSION_SECONDS = 3600
#: Multipart part size: what the SDK holds of an archive is one part, whatever the home's size.
PART_BYTES = 5 * 1024 * 1024
#: Read size of the saved home as it arrives.
READ_BYTES = 1024 * 1024


def aws_name(error: BaseException) -> str:
    """AWS's error code (a boto ``ClientError``'s) or the exception's class when it is a plain
    identifier; never its message."""
    response: Any = getattr(error, "response", None)
    code = response.get("Error", {}).get("Code") if isinstance(response, dict) else None
    name = code if isinstance(code, str) else type(error).__name__
    return name if re.fullmatch(r"[A-Za-z][A-Za-z0-9_.]{0,63}", name) else "unknown error"


def _status(error: BaseException) -> int | None:
    response: Any = getattr(error, "response", None)
    meta = response.get("ResponseMetadata", {}) if isinstance(response, dict) else {}
    status = meta.get("HTTPStatusCode") if isinstance(meta, dict) else None
    return status if isinstance(status, int) else None


def _clients_kwargs(location: S3Prefix) -> dict[str, Any]:
    where: dict[str, Any] = {}
    if location.region is not None:
        where["region_name"] = location.region
    if location.endpoint is not None:
        where["endpoint_url"] = location.endpoint
    return where


class S3HomeStore:
    """The home object of one ``S3Prefix``, reached with the role's temporary credentials."""

    def __init__(self, location: S3Prefix, role_arn: str, client: Any) -> None:
        """Not for callers: use :meth:`open`."""
        self._location = location
        self._role = role_arn
        self._client = client

    @classmethod
    def open(cls, location: S3Prefix, role_arn: str, session_name: str) -> S3HomeStore:
        """Assumes the role and makes the S3 client with its credentials.

        :raises SandboxException: when the caller's credentials cannot assume the role
        """
        boto3: Any = importlib.import_module("boto3")
        Config: Any = importlib.import_module("botocore.config").Config

        where = _clients_kwargs(location)
        credentials: Any = None
        failure: str | None = None
        try:
            sts = boto3.client("sts", **where)
            try:
                out = sts.assume_role(
                    RoleArn=role_arn, RoleSessionName=session_name, DurationSeconds=ROLE_SESSION_SECONDS
                )
                credentials = out.get("Credentials")
            finally:
                sts.close()
        except Exception as error:  # any failure of the assume: named below, without its context
            failure = aws_name(error)
        if failure is not None:
            raise SandboxException(
                f"persist: the caller's credentials could not assume the execution role {role_arn} ({failure})"
            )
        if not isinstance(credentials, dict) or "AccessKeyId" not in credentials:
            raise SandboxException(f"persist: assuming the execution role {role_arn} gave no credentials")
        config = Config(
            # An endpoint override is one host for every bucket (an AWS-compatible server).
            s3={"addressing_style": "path"} if location.endpoint is not None else {},
            # The archive checks itself (gzip's CRC-32, verified by tar as it extracts).
            request_checksum_calculation="when_required",
            response_checksum_validation="when_required",
        )
        client = boto3.client(
            "s3",
            aws_access_key_id=credentials["AccessKeyId"],
            aws_secret_access_key=credentials["SecretAccessKey"],
            aws_session_token=credentials.get("SessionToken"),
            config=config,
            **where,
        )
        return cls(location, role_arn, client)

    def failure(self, error: BaseException, verb: str) -> SandboxException:
        """A ``SandboxException`` for an S3 refusal, naming the bucket, the key or the role."""
        name = aws_name(error)
        bucket, key = self._location.bucket, self._location.key
        if name == "NoSuchBucket":
            return SandboxException(f"persist: bucket {bucket} does not exist")
        if name == "AccessDenied" or _status(error) == 403:
            return SandboxException(
                f"persist: the execution role {self._role} may not {verb} s3://{bucket}/{key} ({name})"
            )
        return SandboxException(f"persist: could not {verb} s3://{bucket}/{key} ({name})")

    def _s3(self, verb: str, method: str, **kwargs: Any) -> Any:
        failure: SandboxException | None = None
        try:
            return getattr(self._client, method)(
                Bucket=self._location.bucket, Key=self._location.key, **kwargs
            )
        except Exception as error:
            failure = self.failure(error, verb)
        raise failure

    def start_upload(self) -> str:
        """Starts a multipart upload of the home object; its id."""
        out = self._s3("write", "create_multipart_upload", ContentType="application/gzip")
        return str(out["UploadId"])

    def upload_part(self, upload_id: str, number: int, data: bytes) -> dict[str, Any]:
        """Uploads part ``number`` (from 1); what ``complete`` needs of it."""
        out = self._s3("write", "upload_part", UploadId=upload_id, PartNumber=number, Body=data)
        return {"PartNumber": number, "ETag": out["ETag"]}

    def complete(self, upload_id: str, parts: list[dict[str, Any]]) -> None:
        """Completes the upload: the home object is replaced now, and only now."""
        self._s3("write", "complete_multipart_upload", UploadId=upload_id, MultipartUpload={"Parts": parts})

    def abort(self, upload_id: str) -> None:
        """Aborts the upload (its parts deleted); the object saved before stays as it was."""
        try:
            self._s3("write", "abort_multipart_upload", UploadId=upload_id)
        except SandboxException:
            pass  # the failure that matters is the one that made the save abort

    def download(self) -> Iterator[bytes] | None:
        """The saved home as it arrives from S3, or None when nothing was saved yet (``NoSuchKey``)."""
        try:
            out = self._s3("read", "get_object")
        except SandboxException as error:
            if "(NoSuchKey)" in error.message:
                return None
            raise
        body = out["Body"]
        return _chunks(body)

    def close(self) -> None:
        """Releases the client's connections."""
        self._client.close()


def _chunks(body: Any) -> Iterator[bytes]:
    try:
        for chunk in body.iter_chunks(READ_BYTES):
            yield chunk
    finally:
        body.close()
