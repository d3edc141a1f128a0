-- TPC-DS Q8: store profit in a quarter in the zip areas of many preferred customers
-- order: 1 limit
SELECT s_store_name, sum(ss_net_profit)
FROM store_sales, date_dim, store,
     (SELECT ca_zip
      FROM (SELECT substr(ca_zip, 1, 5) ca_zip FROM customer_address
            WHERE substr(ca_zip, 1, 5) IN ('10849', '14811', '18207', '21603', '25565', '29244', '32640', '37451', '41696', '46790', '52733', '58110', '63204', '67449', '71977', '77920', '82448', '86693', '91504', '94617')
            INTERSECT
            SELECT ca_zip FROM (SELECT substr(ca_zip, 1, 5) ca_zip, count(*) cnt
                                FROM customer_address, customer
                                WHERE ca_address_sk = c_current_addr_sk AND c_preferred_cust_flag = 'Y'
                                GROUP BY ca_zip
                                HAVING count(*) > 10) a1) a2) v1
WHERE ss_store_sk = s_store_sk
  AND ss_sold_date_sk = d_date_sk
  AND d_qoy = 2 AND d_year = 1998
  AND (substr(s_zip, 1, 2) = substr(v1.ca_zip, 1, 2))
GROUP BY s_store_name
ORDER BY s_store_name
LIMIT 100;
