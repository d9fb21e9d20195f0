# Sourced by scripts/customer and scripts/cdk: the checks that must pass
# before anything long starts, so that a missing AWS CLI, Region, sign-in or
# CDK bootstrap stops a command in its first seconds, with the command that
# fixes it, rather than after the functions have been built and the stack
# synthesized (minutes) when the CDK finds out. Defines functions only.

# aws_profile_note is " --profile NAME" when AWS_PROFILE is set, for the
# commands the messages print.
aws_profile_note() {
  if [ -n "${AWS_PROFILE:-}" ]; then printf ' --profile %s' "$AWS_PROFILE"; fi
}

# aws_resolve_region prints the Region the AWS CLI, the SDKs and the CDK
# use: AWS_REGION, then AWS_DEFAULT_REGION, then the profile's region in the
# AWS config file; nothing when none is set.
aws_resolve_region() {
  if [ -n "${AWS_REGION:-}" ]; then
    echo "$AWS_REGION"
  elif [ -n "${AWS_DEFAULT_REGION:-}" ]; then
    echo "$AWS_DEFAULT_REGION"
  else
    aws configure get region 2>/dev/null || true
  fi
}

# aws_check_account WHO: that the AWS CLI is there, that a Region is set and
# that the credentials sign in (aws sts get-caller-identity, about a
# second). On success sets aws_account and aws_region and prints one line;
# otherwise prints every problem found with the command that fixes it and
# exits 1. WHO names the script in the messages.
aws_check_account() {
  local who=$1 out problems=()
  if ! command -v aws >/dev/null 2>&1; then
    echo "$who: the AWS CLI (aws) is not installed or not on PATH: install AWS CLI v2, configure credentials (aws configure, or AWS_PROFILE), then run this again" >&2
    exit 1
  fi
  aws_region=$(aws_resolve_region)
  if [ -z "$aws_region" ]; then
    problems+=("no AWS Region is set: export AWS_REGION=us-east-1 (the customer's Region), or aws configure set region us-east-1$(aws_profile_note)")
  fi
  # sts answers without a Region (a global endpoint), so both problems are
  # told at once.
  if ! out=$(aws sts get-caller-identity --query Account --output text \
    --cli-connect-timeout 10 --cli-read-timeout 20 ${aws_region:+--region "$aws_region"} 2>&1); then
    out=$(printf '%s\n' "$out" | sed '/^[[:space:]]*$/d' | tail -n 1)
    case "$out" in
      *"Unable to locate credentials"*)
        problems+=("no AWS credentials${AWS_PROFILE:+ for the profile $AWS_PROFILE}: sign in with aws sso login$(aws_profile_note) (IAM Identity Center), or aws configure$(aws_profile_note) (an access key), or export AWS_PROFILE=NAME of a profile that has them (aws configure list-profiles)") ;;
      *[Tt]"oken has expired"* | *"SSO session"*"expired"* | *"Error when retrieving token from sso"*)
        problems+=("the AWS sign-in has expired: aws sso login$(aws_profile_note)") ;;
      *ExpiredToken* | *"security token included in the request is expired"*)
        problems+=("the AWS credentials have expired ($out): aws sso login$(aws_profile_note), or new temporary credentials") ;;
      *InvalidClientTokenId* | *SignatureDoesNotMatch* | *"security token included in the request is invalid"*)
        problems+=("the AWS credentials are not valid ($out): aws configure$(aws_profile_note) with a current access key") ;;
      *"could not be found"*)
        problems+=("$out: export AWS_PROFILE=NAME of a profile that exists (aws configure list-profiles)") ;;
      *)
        problems+=("the AWS credentials could not be checked (aws sts get-caller-identity: $out): check the network and AWS_PROFILE, then run this again") ;;
    esac
  else
    aws_account=$out
  fi
  if [ ${#problems[@]} -gt 0 ]; then
    local p
    for p in "${problems[@]}"; do
      echo "$who: $p" >&2
    done
    echo "$who: stopped before anything was built or deployed." >&2
    exit 1
  fi
  echo "AWS account $aws_account in $aws_region${AWS_PROFILE:+ (profile $AWS_PROFILE)}."
}

# aws_check_bootstrap WHO: that the account and Region have the CDK's
# bootstrap stack, which cdk deploy needs for the functions' code. A
# missing one stops with the command that makes it; a look-up that fails
# otherwise (no permission to read stacks) only warns.
aws_check_bootstrap() {
  local who=$1 out
  if out=$(aws cloudformation describe-stacks --stack-name CDKToolkit --region "$aws_region" \
    --query 'Stacks[0].StackStatus' --output text 2>&1); then
    case "$out" in
      *_COMPLETE) return 0 ;;
    esac
    echo "$who: the CDK bootstrap stack CDKToolkit in $aws_region is $out: finish or repair it (./scripts/cdk bootstrap aws://$aws_account/$aws_region), then run this again" >&2
    exit 1
  fi
  if [[ $out == *"does not exist"* ]]; then
    echo "$who: the account $aws_account has no CDK bootstrap in $aws_region: run ./scripts/cdk bootstrap aws://$aws_account/$aws_region once (a minute or two), then run this again" >&2
    exit 1
  fi
  echo "$who: warning: the CDK bootstrap was not checked ($(printf '%s\n' "$out" | sed '/^[[:space:]]*$/d' | tail -n 1))" >&2
}
