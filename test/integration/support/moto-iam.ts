/**
 * IAM enforced by moto (server mode): users, roles, trust and permission policies made with boto3 (which
 * moto ships with) while moto still admits everyone, then `POST /moto-api/reset-auth 0`, after which
 * every call must be signed with a key of a user made here, and STS AssumeRole checks both the caller's
 * policy and the role's trust policy. Only loopback is ever called.
 */
import { execFileSync } from 'node:child_process';

/** moto's account. */
export const MOTO_ACCOUNT = '123456789012';

/** An access key of a user moto knows. */
export interface AccessKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** What `enforceIam` made. */
export interface MotoIam {
  /** May only assume roles (`sts:AssumeRole` on every role): the SDK's caller. */
  readonly caller: AccessKey;
  /** May do anything: the test's own look at the bucket. */
  readonly admin: AccessKey;
  /** Trusts the caller; may do anything in S3. */
  readonly homeRole: string;
  /** Trusts only another principal: the caller cannot assume it. */
  readonly untrustingRole: string;
  /** Trusts the caller; has no S3 permission. */
  readonly noS3Role: string;
}

const SETUP = `
import json, sys, boto3
endpoint, region, buckets = sys.argv[1], sys.argv[2], sys.argv[3:]
kw = dict(endpoint_url=endpoint, region_name=region, aws_access_key_id='setup', aws_secret_access_key='setup')
iam, s3 = boto3.client('iam', **kw), boto3.client('s3', **kw)
def user(name, actions):
    iam.create_user(UserName=name)
    iam.put_user_policy(UserName=name, PolicyName='p', PolicyDocument=json.dumps(
        {'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': actions, 'Resource': '*'}]}))
    key = iam.create_access_key(UserName=name)['AccessKey']
    return {'accessKeyId': key['AccessKeyId'], 'secretAccessKey': key['SecretAccessKey']}
def role(name, trusted, actions):
    trust = {'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Principal': {'AWS': trusted}, 'Action': 'sts:AssumeRole'}]}
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))['Role']['Arn']
    if actions:
        iam.put_role_policy(RoleName=name, PolicyName='p', PolicyDocument=json.dumps(
            {'Version': '2012-10-17', 'Statement': [{'Effect': 'Allow', 'Action': actions, 'Resource': '*'}]}))
    return arn
caller = user('sdk-caller', ['sts:AssumeRole'])
admin = user('test-admin', ['*'])
me = 'arn:aws:iam::${MOTO_ACCOUNT}:user/sdk-caller'
out = {'caller': caller, 'admin': admin,
       'homeRole': role('sandbox-home', me, ['s3:*']),
       'untrustingRole': role('someone-elses', 'arn:aws:iam::${MOTO_ACCOUNT}:user/someone-else', ['s3:*']),
       'noS3Role': role('no-s3', me, [])}
for bucket in buckets: s3.create_bucket(Bucket=bucket)
print(json.dumps(out))
`;

/**
 * Makes the users, roles and `buckets` on a fresh moto at `endpoint`, then turns IAM enforcement on.
 */
export async function enforceIam(endpoint: string, region: string, buckets: string[]): Promise<MotoIam> {
  const made = JSON.parse(
    execFileSync('python3', ['-c', SETUP, endpoint, region, ...buckets], { encoding: 'utf8' }),
  ) as MotoIam;
  const res = await fetch(`${endpoint}/moto-api/reset-auth`, { method: 'POST', body: '0' });
  if (!res.ok) throw new Error(`moto refused to enforce IAM (${String(res.status)})`);
  return made;
}
