package tpch

import (
	"strconv"
	"strings"
)

// queryText holds the 22 queries as the specification writes them (clause
// 2.4.n.1), with qgen's parameters (clause 2.4.n.3). Date arithmetic on
// parameters is done here, so the SQL holds plain date literals; the other
// dialect differences are extract(year) (strftime on SQLite), Q13's
// derived-table columns (named in the subquery, which SQLite needs) and
// Q15's view (a WITH clause, the same on every engine).
var queryText = [Queries]func(q *qb) string{
	// Q1: pricing summary report.
	func(q *qb) string {
		delta, _ := strconv.Atoi(q.int("DELTA", 60, 120))
		return `select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty,
	sum(l_extendedprice) as sum_base_price,
	sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
	sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
	avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc,
	count(*) as count_order
from lineitem
where l_shipdate <= ` + q.date(ymd(1998, 12, 1).AddDate(0, 0, -delta)) + `
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus`
	},
	// Q2: minimum cost supplier.
	func(q *qb) string {
		size := q.int("SIZE", 1, 50)
		typ := q.word("TYPE", typeSyllable3)
		region := q.word("REGION", regions)
		return `select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
from part, supplier, partsupp, nation, region
where p_partkey = ps_partkey and s_suppkey = ps_suppkey and p_size = ` + size + `
	and p_type like '%` + typ + `' and s_nationkey = n_nationkey and n_regionkey = r_regionkey
	and r_name = '` + region + `'
	and ps_supplycost = (
		select min(ps_supplycost) from partsupp, supplier, nation, region
		where p_partkey = ps_partkey and s_suppkey = ps_suppkey and s_nationkey = n_nationkey
			and n_regionkey = r_regionkey and r_name = '` + region + `')
order by s_acctbal desc, n_name, s_name, p_partkey
limit 100`
	},
	// Q3: shipping priority.
	func(q *qb) string {
		seg := q.word("SEGMENT", segments)
		d := q.r.between(1, 31)
		date := ymd(1995, 3, int(d))
		q.param("DATE", date.Format("2006-01-02"))
		return `select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
from customer, orders, lineitem
where c_mktsegment = '` + seg + `' and c_custkey = o_custkey and l_orderkey = o_orderkey
	and o_orderdate < ` + q.date(date) + ` and l_shipdate > ` + q.date(date) + `
group by l_orderkey, o_orderdate, o_shippriority
order by revenue desc, o_orderdate
limit 10`
	},
	// Q4: order priority checking.
	func(q *qb) string {
		d := q.month("DATE", ymd(1993, 1, 1), 58)
		return `select o_orderpriority, count(*) as order_count
from orders
where o_orderdate >= ` + q.date(d) + ` and o_orderdate < ` + q.date(d.AddDate(0, 3, 0)) + `
	and exists (select * from lineitem where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
group by o_orderpriority
order by o_orderpriority`
	},
	// Q5: local supplier volume.
	func(q *qb) string {
		region := q.word("REGION", regions)
		d := q.jan1("DATE")
		return `select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
from customer, orders, lineitem, supplier, nation, region
where c_custkey = o_custkey and l_orderkey = o_orderkey and l_suppkey = s_suppkey
	and c_nationkey = s_nationkey and s_nationkey = n_nationkey and n_regionkey = r_regionkey
	and r_name = '` + region + `' and o_orderdate >= ` + q.date(d) + `
	and o_orderdate < ` + q.date(d.AddDate(1, 0, 0)) + `
group by n_name
order by revenue desc`
	},
	// Q6: forecasting revenue change.
	func(q *qb) string {
		d := q.jan1("DATE")
		disc := q.r.between(2, 9)
		q.param("DISCOUNT", cents(disc))
		qty := q.int("QUANTITY", 24, 25)
		return `select sum(l_extendedprice * l_discount) as revenue
from lineitem
where l_shipdate >= ` + q.date(d) + ` and l_shipdate < ` + q.date(d.AddDate(1, 0, 0)) + `
	and l_discount between ` + cents(disc-1) + ` and ` + cents(disc+1) + `
	and l_quantity < ` + qty
	},
	// Q7: volume shipping.
	func(q *qb) string {
		ns := q.distinct(nationNames(), 2)
		n1, n2 := q.param("NATION1", ns[0]), q.param("NATION2", ns[1])
		return `select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
	select n1.n_name as supp_nation, n2.n_name as cust_nation, ` + q.year("l_shipdate") + ` as l_year,
		l_extendedprice * (1 - l_discount) as volume
	from supplier, lineitem, orders, customer, nation n1, nation n2
	where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey
		and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey
		and ((n1.n_name = '` + n1 + `' and n2.n_name = '` + n2 + `')
			or (n1.n_name = '` + n2 + `' and n2.n_name = '` + n1 + `'))
		and l_shipdate between ` + q.date(ymd(1995, 1, 1)) + ` and ` + q.date(ymd(1996, 12, 31)) + `
) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation, cust_nation, l_year`
	},
	// Q8: national market share.
	func(q *qb) string {
		nk := q.r.between(0, int64(len(nations)-1))
		nation := q.param("NATION", nations[nk].name)
		region := q.param("REGION", regions[nations[nk].region])
		typ := q.param("TYPE", pick(&q.r, partTypes))
		return `select o_year, sum(case when nation = '` + nation + `' then volume else 0 end) / sum(volume) as mkt_share
from (
	select ` + q.year("o_orderdate") + ` as o_year, l_extendedprice * (1 - l_discount) as volume,
		n2.n_name as nation
	from part, supplier, lineitem, orders, customer, nation n1, nation n2, region
	where p_partkey = l_partkey and s_suppkey = l_suppkey and l_orderkey = o_orderkey
		and o_custkey = c_custkey and c_nationkey = n1.n_nationkey and n1.n_regionkey = r_regionkey
		and r_name = '` + region + `' and s_nationkey = n2.n_nationkey
		and o_orderdate between ` + q.date(ymd(1995, 1, 1)) + ` and ` + q.date(ymd(1996, 12, 31)) + `
		and p_type = '` + typ + `'
) as all_nations
group by o_year
order by o_year`
	},
	// Q9: product type profit measure.
	func(q *qb) string {
		color := q.word("COLOR", colors)
		return `select nation, o_year, sum(amount) as sum_profit
from (
	select n_name as nation, ` + q.year("o_orderdate") + ` as o_year,
		l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
	from part, supplier, lineitem, partsupp, orders, nation
	where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey
		and p_partkey = l_partkey and o_orderkey = l_orderkey and s_nationkey = n_nationkey
		and p_name like '%` + color + `%'
) as profit
group by nation, o_year
order by nation, o_year desc`
	},
	// Q10: returned item reporting.
	func(q *qb) string {
		d := q.month("DATE", ymd(1993, 2, 1), 24)
		return `select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue,
	c_acctbal, n_name, c_address, c_phone, c_comment
from customer, orders, lineitem, nation
where c_custkey = o_custkey and l_orderkey = o_orderkey
	and o_orderdate >= ` + q.date(d) + ` and o_orderdate < ` + q.date(d.AddDate(0, 3, 0)) + `
	and l_returnflag = 'R' and c_nationkey = n_nationkey
group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
order by revenue desc
limit 20`
	},
	// Q11: important stock identification.
	func(q *qb) string {
		nation := q.word("NATION", nationNames())
		frac := q.param("FRACTION", strconv.FormatFloat(0.0001/q.sf, 'g', -1, 64))
		return `select ps_partkey, sum(ps_supplycost * ps_availqty) as value
from partsupp, supplier, nation
where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = '` + nation + `'
group by ps_partkey
having sum(ps_supplycost * ps_availqty) > (
	select sum(ps_supplycost * ps_availqty) * ` + frac + `
	from partsupp, supplier, nation
	where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = '` + nation + `')
order by value desc`
	},
	// Q12: shipping modes and order priority.
	func(q *qb) string {
		ms := q.distinct(shipModes, 2)
		m1, m2 := q.param("SHIPMODE1", ms[0]), q.param("SHIPMODE2", ms[1])
		d := q.jan1("DATE")
		return `select l_shipmode,
	sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count,
	sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end) as low_line_count
from orders, lineitem
where o_orderkey = l_orderkey and l_shipmode in ('` + m1 + `', '` + m2 + `')
	and l_commitdate < l_receiptdate and l_shipdate < l_commitdate
	and l_receiptdate >= ` + q.date(d) + ` and l_receiptdate < ` + q.date(d.AddDate(1, 0, 0)) + `
group by l_shipmode
order by l_shipmode`
	},
	// Q13: customer distribution.
	func(q *qb) string {
		w1 := q.word("WORD1", []string{"special", "pending", "unusual", "express"})
		w2 := q.word("WORD2", []string{"packages", "requests", "accounts", "deposits"})
		return `select c_count, count(*) as custdist
from (
	select c_custkey, count(o_orderkey) as c_count
	from customer left outer join orders on c_custkey = o_custkey
		and o_comment not like '%` + w1 + `%` + w2 + `%'
	group by c_custkey
) as c_orders
group by c_count
order by custdist desc, c_count desc`
	},
	// Q14: promotion effect.
	func(q *qb) string {
		d := q.month("DATE", ymd(1993, 1, 1), 60)
		return `select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
	/ sum(l_extendedprice * (1 - l_discount)) as promo_revenue
from lineitem, part
where l_partkey = p_partkey and l_shipdate >= ` + q.date(d) + ` and l_shipdate < ` + q.date(d.AddDate(0, 1, 0))
	},
	// Q15: top supplier (the view revenue0 as a WITH clause).
	func(q *qb) string {
		d := q.month("DATE", ymd(1993, 1, 1), 58)
		return `with revenue0 as (
	select l_suppkey as supplier_no, sum(l_extendedprice * (1 - l_discount)) as total_revenue
	from lineitem
	where l_shipdate >= ` + q.date(d) + ` and l_shipdate < ` + q.date(d.AddDate(0, 3, 0)) + `
	group by l_suppkey)
select s_suppkey, s_name, s_address, s_phone, total_revenue
from supplier, revenue0
where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from revenue0)
order by s_suppkey`
	},
	// Q16: parts/supplier relationship.
	func(q *qb) string {
		brand := q.brand("BRAND")
		typ := q.param("TYPE", pick(&q.r, typeSyllable1)+" "+pick(&q.r, typeSyllable2))
		sizes := make([]string, 50)
		for i := range sizes {
			sizes[i] = strconv.Itoa(i + 1)
		}
		ss := q.distinct(sizes, 8)
		for i, s := range ss {
			q.param("SIZE"+strconv.Itoa(i+1), s)
		}
		return `select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
from partsupp, part
where p_partkey = ps_partkey and p_brand <> '` + brand + `' and p_type not like '` + typ + `%'
	and p_size in (` + strings.Join(ss, ", ") + `)
	and ps_suppkey not in (select s_suppkey from supplier where s_comment like '%Customer%Complaints%')
group by p_brand, p_type, p_size
order by supplier_cnt desc, p_brand, p_type, p_size`
	},
	// Q17: small-quantity-order revenue.
	func(q *qb) string {
		brand := q.brand("BRAND")
		cont := q.param("CONTAINER", pick(&q.r, containers))
		return `select sum(l_extendedprice) / 7.0 as avg_yearly
from lineitem, part
where p_partkey = l_partkey and p_brand = '` + brand + `' and p_container = '` + cont + `'
	and l_quantity < (select 0.2 * avg(l_quantity) from lineitem where l_partkey = p_partkey)`
	},
	// Q18: large volume customer.
	func(q *qb) string {
		qty := q.int("QUANTITY", 312, 315)
		return `select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) as sum_qty
from customer, orders, lineitem
where o_orderkey in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > ` + qty + `)
	and c_custkey = o_custkey and o_orderkey = l_orderkey
group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
order by o_totalprice desc, o_orderdate
limit 100`
	},
	// Q19: discounted revenue.
	func(q *qb) string {
		q1 := q.int("QUANTITY1", 1, 10)
		q2 := q.int("QUANTITY2", 10, 20)
		q3 := q.int("QUANTITY3", 20, 30)
		b1, b2, b3 := q.brand("BRAND1"), q.brand("BRAND2"), q.brand("BRAND3")
		arm := func(brand, conts, qty, size string) string {
			return `(p_partkey = l_partkey and p_brand = '` + brand + `'
		and p_container in (` + conts + `)
		and l_quantity >= ` + qty + ` and l_quantity <= ` + qty + ` + 10
		and p_size between 1 and ` + size + `
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')`
		}
		return `select sum(l_extendedprice * (1 - l_discount)) as revenue
from lineitem, part
where ` + arm(b1, "'SM CASE', 'SM BOX', 'SM PACK', 'SM PKG'", q1, "5") + `
	or ` + arm(b2, "'MED BAG', 'MED BOX', 'MED PKG', 'MED PACK'", q2, "10") + `
	or ` + arm(b3, "'LG CASE', 'LG BOX', 'LG PACK', 'LG PKG'", q3, "15")
	},
	// Q20: potential part promotion.
	func(q *qb) string {
		color := q.word("COLOR", colors)
		d := q.jan1("DATE")
		nation := q.word("NATION", nationNames())
		return `select s_name, s_address
from supplier, nation
where s_suppkey in (
		select ps_suppkey from partsupp
		where ps_partkey in (select p_partkey from part where p_name like '` + color + `%')
			and ps_availqty > (
				select 0.5 * sum(l_quantity) from lineitem
				where l_partkey = ps_partkey and l_suppkey = ps_suppkey
					and l_shipdate >= ` + q.date(d) + ` and l_shipdate < ` + q.date(d.AddDate(1, 0, 0)) + `))
	and s_nationkey = n_nationkey and n_name = '` + nation + `'
order by s_name`
	},
	// Q21: suppliers who kept orders waiting.
	func(q *qb) string {
		nation := q.word("NATION", nationNames())
		return `select s_name, count(*) as numwait
from supplier, lineitem l1, orders, nation
where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey and o_orderstatus = 'F'
	and l1.l_receiptdate > l1.l_commitdate
	and exists (select * from lineitem l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
	and not exists (
		select * from lineitem l3
		where l3.l_orderkey = l1.l_orderkey and l3.l_suppkey <> l1.l_suppkey
			and l3.l_receiptdate > l3.l_commitdate)
	and s_nationkey = n_nationkey and n_name = '` + nation + `'
group by s_name
order by numwait desc, s_name
limit 100`
	},
	// Q22: global sales opportunity.
	func(q *qb) string {
		codes := make([]string, len(nations))
		for i := range codes {
			codes[i] = strconv.Itoa(i + 10)
		}
		cs := q.distinct(codes, 7)
		for i, c := range cs {
			q.param("I"+strconv.Itoa(i+1), c)
		}
		in := quoteList(cs)
		return `select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
from (
	select substr(c_phone, 1, 2) as cntrycode, c_acctbal
	from customer
	where substr(c_phone, 1, 2) in (` + in + `)
		and c_acctbal > (
			select avg(c_acctbal) from customer
			where c_acctbal > 0.00 and substr(c_phone, 1, 2) in (` + in + `))
		and not exists (select * from orders where o_custkey = c_custkey)
) as custsale
group by cntrycode
order by cntrycode`
	},
}
